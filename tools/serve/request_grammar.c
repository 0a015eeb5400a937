// request_grammar.c - what constrains a request's generation, in llama-server's order of
// precedence: its own GBNF `grammar`; else a JSON Schema (`json_schema`, `response_format`) made
// a grammar by llama.cpp's converter (mint_json_schema_to_grammar); else the grammar its tools
// ask for (handlers_tools.c: a call for tool_choice "required", a lazy one for "auto" with its
// trigger words and patterns). Compiled once when the request comes (a bad one is the request's
// fault: a 400), then once more per further job, since a grammar holds one generation's state.
#include "gen.h"

#include <stdio.h>
#include <string.h>

bool req_grammar_prepare(gen *g, req_grammar *rg, const char **param, char *msg, size_t cap) {
    memset(rg, 0, sizeof *rg);
    rg->params = mint_grammar_default_params();
    const serve_request *r = &g->req;
    mint_err err;
    if (r->json_schema && mint_json_schema_to_grammar(r->json_schema, strlen(r->json_schema),
                                                      &rg->gbnf, &err) != MINT_OK) {
        *param = "json_schema";
        snprintf(msg, cap, "%s", err.msg);
        return false;
    }
    const bool tools = !rg->gbnf && !r->grammar && tools_grammar(g, &rg->cg);
    rg->text = r->grammar ? r->grammar : rg->gbnf ? rg->gbnf : tools ? rg->cg.gbnf : NULL;
    if (tools && rg->cg.lazy) {
        rg->params.trigger_words = (const char *const *)rg->cg.trigger_words;
        rg->params.n_trigger_words = rg->cg.n_trigger_words;
        rg->params.trigger_patterns = (const char *const *)rg->cg.trigger_patterns;
        rg->params.n_trigger_patterns = rg->cg.n_trigger_patterns;
    }
    if (!rg->text || g->peek) return true;
    if (mint_grammar_create(sched_model(g->h->e), rg->text, strlen(rg->text), &rg->params,
                            &rg->first, &err) != MINT_OK) {
        *param = r->grammar ? "grammar" : tools ? "tools" : "json_schema";
        snprintf(msg, cap, "%s", err.msg);
        return false;
    }
    return true;
}

bool req_grammar_attach(gen *g, req_grammar *rg) {
    bool ok = true;
    for (int i = 0; rg->first && i < g->n; i++) { // the first job takes the checked one
        if (!g->jobs[i]) continue;
        mint_err err;
        if (i == 0)
            g->jobs[i]->grammar = rg->first;
        else if (mint_grammar_create(sched_model(g->h->e), rg->text, strlen(rg->text), &rg->params,
                                     &g->jobs[i]->grammar, &err) != MINT_OK)
            ok = false;
    }
    if (rg->first && g->jobs[0]) rg->first = NULL; // now the job's
    return ok;
}

void req_grammar_free(req_grammar *rg) {
    mint_grammar_free(rg->first);
    mint_grammar_text_free(rg->gbnf);
    mint_chat_grammar_free(&rg->cg);
    memset(rg, 0, sizeof *rg);
}
