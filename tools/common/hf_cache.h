// hf_cache.h - llama.cpp's `-hf owner/name[:quant]` and `--hf-file FILE`, resolved offline: the
// file is looked up in the Hugging Face cache folder that llama.cpp's downloader and Hugging
// Face's tools fill (LLAMA_CACHE, HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME/hub,
// XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub, the first set wins), in its layout
// models--owner--name/refs/main (the commit) and snapshots/<commit>/<file>. mint never downloads:
// a model that is not there is an error saying so.
#ifndef MINT_HF_CACHE_H
#define MINT_HF_CACHE_H

#include <stdbool.h>
#include <stddef.h>

// Writes the path of repo's file (file NULL: the repository's .gguf whose name holds the quant
// after ':' in repo, Q4_K_M when none is given, else its first .gguf) into out; false with one
// line in err when the name is malformed or the file is not in the cache.
bool hf_cache_find(const char *repo, const char *file, char *out, size_t cap, char *err,
                   size_t errlen);

// The cache folder (the first of the variables above that is set) into out; false when none is.
bool hf_cache_dir(char *out, size_t cap);

#endif // MINT_HF_CACHE_H
