// mint-run - generate text with a llama-family model: prompt in, tokens streamed out.
//
// One token's path: the prompt is tokenized and evaluated as one batch (mint_eval), then each
// step samples a token from the last logits (mint_sampler_sample), prints its piece, and
// evaluates it at the next position, reusing the KV cache (tools/run/plain.c). The other
// modes: -cnv, a multi-turn chat that evaluates only each turn's new tokens (tools/run/chat.c);
// --beams, --draft/--lookup and --n-parallel, the decoding strategies that run several
// sequences in one context (tools/run/decoding.c). Uses the public API (mint.h) only.
#include "chat_arg.h"
#include "cli.h"
#include "options.h"
#include "run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void describe(const mint_model *m, const mint_ctx *ctx, uint64_t seed) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    fprintf(stderr,
            TOOL ": %s '%s': %d layers, n_embd %d, n_ff %d, heads %d/%d (kv), head_dim %d, "
                 "vocab %d, ctx_train %d\n",
            d.arch, d.name, d.n_layer, d.n_embd, d.n_ff, d.n_head, d.n_head_kv, d.head_dim,
            d.n_vocab, d.n_ctx_train);
    fprintf(stderr,
            TOOL ": rope base %g scale %g, rms eps %g, %" PRIu64 " parameters, %.2f MiB, types "
                 "%s\n",
            d.rope_base, d.rope_freq_scale, d.rms_eps, d.n_params, d.weight_bytes / 1048576.0,
            d.types);
    mint_cache_info ci;
    mint_ctx_cache_info(ctx, &ci);
    fprintf(stderr,
            TOOL ": kernels %s, %d threads, context %d, seed %" PRIu64 ", attention %s (%.1f KiB "
                 "of scratch per thread), KV cache in blocks of %d positions (%.2f MiB each, up "
                 "to %d)\n",
            mint_ctx_isa_name(ctx), mint_ctx_n_threads(ctx), mint_ctx_n_ctx(ctx), seed,
            mint_ctx_attention_name(ctx), mint_ctx_attention_scratch(ctx) / 1024.0, ci.block,
            ci.bytes_block / 1048576.0, ci.blocks_max);
}

int main(int argc, char **argv) {
    run_options o;
    cli_chat_names_init(); // --chat-template's names, for --help and the check
    int done = opt_main(&run_program, argc, argv, &o);
    if (done >= 0) return done;
    session s = {.o = &o};
    mint_err err;
    double t0 = cli_now();
    if (load_model(TOOL, o.model, &o.load, &s.m, &err) != MINT_OK) return run_fail(err.msg);
    s.st.t_load = cli_now() - t0;
    mint_model_desc d;
    mint_model_describe(s.m, &d);
    s.n_vocab = d.n_vocab;
    char *tmpl = NULL; // the chat template's Jinja source
    if (o.chat) {
        char why[600];
        tmpl = run_chat_template(&o, s.m, why, sizeof why);
        if (!tmpl) {
            mint_model_close(s.m);
            return run_fail(why);
        }
    }

    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = o.n_threads;
    cp.n_ctx = o.n_ctx;
    cp.n_batch = o.n_batch;
    cp.kv_type = (mint_kv_type)o.kv_type;
    cp.attention = (mint_attention)o.attention;
    cp.kv_block = o.kv_block;
    cp.n_seq_max = o.beams > 1 ? o.beams : o.n_parallel > 1 ? o.n_parallel : 1;
    if (mint_ctx_create(s.m, &cp, &s.ctx, &err) != MINT_OK) {
        mint_model_close(s.m);
        return run_fail(err.msg);
    }
    if (o.dump_graph) {
        fputs(mint_ctx_graph_text(s.ctx), stdout);
        mint_ctx_free(s.ctx);
        mint_model_close(s.m);
        return 0;
    }
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = o.temp;
    sp.top_k = o.top_k;
    sp.top_p = o.top_p;
    sp.min_p = o.min_p;
    sp.repeat_penalty = o.repeat_penalty;
    sp.repeat_last_n = o.repeat_last_n;
    sp.seed = o.seed >= 0 ? (uint64_t)o.seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    s.sp = sp;
    if (mint_sampler_create(&sp, d.n_vocab, &s.smpl, &err) != MINT_OK) {
        mint_ctx_free(s.ctx);
        mint_model_close(s.m);
        return run_fail(err.msg);
    }
    if (o.grammar || o.grammar_file || o.json_schema || o.json_schema_file) {
        // A grammar (or a schema) that does not parse stops before any work.
        const bool schema = o.json_schema || o.json_schema_file;
        const char *given = o.grammar ? o.grammar : o.json_schema;
        const char *file = o.grammar_file ? o.grammar_file : o.json_schema_file;
        size_t len = given ? strlen(given) : 0;
        char why[600] = "out of memory";
        char *text = given ? strdup(given) : cli_read_file(file, &len, why, sizeof why);
        mint_status st = text ? MINT_OK : MINT_E_IO;
        if (text && schema) { // llama.cpp's JSON Schema to GBNF, then as a grammar
            char *gbnf = NULL;
            st = mint_json_schema_to_grammar(text, len, &gbnf, &err);
            free(text);
            text = st == MINT_OK ? strdup(gbnf) : NULL;
            mint_grammar_text_free(gbnf);
            if (st == MINT_OK && !text) st = MINT_E_NOMEM;
            len = text ? strlen(text) : 0;
        }
        if (st == MINT_OK) st = mint_grammar_create(s.m, text, len, NULL, &s.grammar, &err);
        free(text);
        if (st != MINT_OK) {
            mint_sampler_free(s.smpl);
            mint_ctx_free(s.ctx);
            mint_model_close(s.m);
            free(tmpl);
            return run_fail(st == MINT_E_IO || st == MINT_E_NOMEM ? why : err.msg);
        }
        mint_sampler_set_grammar(s.smpl, s.grammar);
    }
    if (o.verbose) describe(s.m, s.ctx, sp.seed);
    int rc = o.chat                ? run_chat(&s, tmpl)
             : o.beams             ? run_beams(&s)
             : o.draft || o.lookup ? run_speculative(&s)
             : o.n_parallel        ? run_parallel(&s)
                                   : run_generate(&s);
    free(tmpl);
    mint_sampler_free(s.smpl);
    mint_grammar_free(s.grammar);
    mint_ctx_free(s.ctx);
    mint_model_close(s.m);
    return rc;
}
