// test_gguf.c - the GGUF reader on real files.
#include "formats/gguf.h"
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <string.h>

Test(gguf_real, stories260K_header_and_tensors) {
    mint_err err;
    mint_file *f = NULL;
    cr_assert_eq(mint_file_open(mt_data_path("stories260K.gguf"), &f, &err), MINT_OK, "%s",
                 err.msg);
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.version, 3);
    cr_assert_eq(info.n_kv, 19);
    cr_assert_eq(info.n_tensors, 48);
    cr_assert_eq(info.data_offset, 14176);
    mint_tensor_info t;
    cr_assert_eq(mint_file_find_tensor(f, "blk.0.attn_k.weight", &t), MINT_OK);
    cr_assert_eq(t.ne[0], 64);
    cr_assert_eq(t.ne[1], 32);
    cr_assert_eq(t.offset, 278784);
    mint_file_close(f);
}
