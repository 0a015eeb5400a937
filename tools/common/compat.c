// compat.c - see compat.h.
#include "compat.h"

#include "mint.h"

#include <stdio.h>
#include <string.h>

const char *const compat_auto_off_on[] = {"auto", "off", "on", NULL};
const char *const compat_cache_types[] = {"f32", "f16", "q8_0", "q4_0", NULL};
const char *const compat_split_modes[] = {"none", "layer", "row", NULL};

bool compat_fold(const compat_options *c, int *attention, int *kv_type, char *err, size_t errlen) {
    if (attention && c->flash_attn == 2) { // on
        if (*attention != MINT_ATTENTION_AUTO && *attention != MINT_ATTENTION_FLASH) {
            snprintf(err, errlen, "-fa on and --attention %s disagree",
                     mint_attention_name((mint_attention)*attention));
            return false;
        }
        *attention = MINT_ATTENTION_FLASH;
    } else if (attention && c->flash_attn == 1 && *attention == MINT_ATTENTION_FLASH) {
        snprintf(err, errlen, "-fa off and --attention flash disagree");
        return false;
    }
    if (!c->cache_k && !c->cache_v) return true;
    // llama.cpp's cache is f16 unless told otherwise; mint's K and V share one type.
    const char *k = c->cache_k ? c->cache_k : "f16", *v = c->cache_v ? c->cache_v : "f16";
    if (strcmp(k, v) != 0) {
        if (c->cache_k && c->cache_v)
            snprintf(err, errlen,
                     "-ctk %s and -ctv %s differ: mint keeps K and V in one type (--kv-type)", k,
                     v);
        else
            snprintf(err, errlen,
                     "%s %s alone leaves the other cache at llama.cpp's f16: mint keeps K and V "
                     "in one type (give both, or --kv-type %s)",
                     c->cache_k ? "-ctk" : "-ctv", c->cache_k ? k : v, c->cache_k ? k : v);
        return false;
    }
    const int t = opt_name_index(compat_cache_types, k);
    if (*kv_type != MINT_KV_F32 && *kv_type != t) {
        snprintf(err, errlen, "-ctk/-ctv %s and --kv-type %s disagree", k,
                 compat_cache_types[*kv_type]);
        return false;
    }
    *kv_type = t;
    return true;
}
