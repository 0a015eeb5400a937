// chat_presets.c - llama.cpp's built-in chat template names (llama-server / llama-cli
// --chat-template NAME), each carried as a Jinja source that mint's Jinja engine renders to the
// very text llama.cpp's hand-written C++ builds for that name (llama_chat_apply_template, which
// has no Jinja parser). tests/test_chat_presets.c holds every name to llama.cpp's output
// (tests/reference/chat_presets.json), byte for byte.
//
// What the C++ does and how the sources say it:
//   - It writes no BOS or EOS from the vocabulary: where its text has "<s>" or "</s>", that is
//     literal text, so the sources never read bos_token / eos_token.
//   - Its trim() drops what C's isspace() calls space in the "C" locale (space, \t, \n, \v, \f,
//     \r) and nothing else, so contents are trimmed with .strip(' \t\n\v\f\r'), not Python's
//     strip(), which would also drop U+00A0, U+3000, U+001C-001F...
//   - Where it upper-cases a role (bailing, openchat) it uses C's toupper, ASCII only; mint's
//     upper is ASCII only too (jinja2's would also map non-ASCII letters: a role such as "été"
//     differs between jinja2 and llama.cpp, not between mint and llama.cpp).
//   - State across messages (Llama-2's and Mistral's "inside a turn", Gemma's and Orion's system
//     text waiting for the next turn) is a namespace(), which jinja2 carries out of loops.
//   - Several ignore add_generation_prompt (the Llama-2 and Mistral variants, MiniCPM, Orion, the
//     three Hunyuan, DeepSeek-OCR; RWKV World's prompt follows the last user turn whatever it
//     says): the sources ignore it alike.
// Nothing any name does is beyond Jinja: every builder is string concatenation over the
// messages, which a template can always express.
#include "mint.h"

#include <string.h>

// Contents trimmed as llama.cpp's trim() does (C's isspace in the "C" locale).
#define TRIM ".strip(' \\t\\n\\v\\f\\r')"
// The text added after the messages when the generation prompt is asked for.
#define GEN(text) "{% if add_generation_prompt %}{{ '" text "' }}{% endif %}"
// Each message's role upper-cased, "user" becoming HUMAN (Ant Group's Ling / Ring).
#define BAILING_ROLE "('HUMAN' if m.role == 'user' else m.role|upper)"

// Llama-2's four variants: one "[INST] " to start, a BOS-less "[INST] " (or "<s>[INST] ") to
// reopen a turn after each assistant message, a system message wrapped in <<SYS>> (sys) or
// followed by a newline, contents stripped or not; add_generation_prompt has no effect.
#define LLAMA2(content, reopen, system)                                                            \
    "{{ '[INST] ' }}{% set ns = namespace(inside=true) %}{% for m in messages %}"                  \
    "{% set c = " content " %}"                                                                    \
    "{% if not ns.inside %}{% set ns.inside = true %}{{ '" reopen "' }}{% endif %}"                \
    "{% if m.role == 'system' %}{{ " system " }}"                                                  \
    "{% elif m.role == 'user' %}{{ c + ' [/INST]' }}"                                              \
    "{% else %}{{ c + '</s>' }}{% set ns.inside = false %}{% endif %}{% endfor %}"
#define LLAMA2_SYS "'<<SYS>>\\n' + c + '\\n<</SYS>>\\n\\n'"

// Mistral's v1 / v3 / v3-tekken: "[INST]" opens a turn before any message when none is open;
// the system text and the user's sit inside it; an assistant message closes it with "</s>".
// lead: the space before [INST] and [/INST] (v1); trail: the space after [INST] and before the
// reply (not tekken); reply: the assistant's content, trimmed in v3.
#define MISTRAL(lead, trail, reply)                                                                \
    "{% set ns = namespace(inside=false) %}{% for m in messages %}"                                \
    "{% if not ns.inside %}{{ '" lead "[INST]" trail "' }}{% set ns.inside = true %}{% endif %}"   \
    "{% if m.role == 'system' %}{{ m.content + '\\n\\n' }}"                                        \
    "{% elif m.role == 'user' %}{{ m.content + '" lead "[/INST]' }}"                               \
    "{% else %}{{ '" trail "' + " reply " + '</s>' }}{% set ns.inside = false %}{% endif %}"       \
    "{% endfor %}"

// Mistral's v7 (space after the opening tags) and v7-tekken (none): the system prompt in
// [SYSTEM_PROMPT], each user turn in [INST], any other message closed by "</s>".
#define MISTRAL_V7(sp)                                                                             \
    "{% for m in messages %}{% if m.role == 'system' %}"                                           \
    "{{ '[SYSTEM_PROMPT]" sp "' + m.content + '[/SYSTEM_PROMPT]' }}"                               \
    "{% elif m.role == 'user' %}{{ '[INST]" sp "' + m.content + '[/INST]' }}"                      \
    "{% else %}{{ '" sp "' + m.content + '</s>' }}{% endif %}{% endfor %}"

// EXAONE 3 (system, user, assistant) and 4 (and tool): "[|role|]" and the trimmed content;
// every turn but the user's closed with [|endofturn|].
#define EXAONE_TURNS                                                                               \
    "{% if m.role == 'system' %}{{ '[|system|]' + m.content" TRIM " + '[|endofturn|]\\n' }}"       \
    "{% elif m.role == 'user' %}{{ '[|user|]' + m.content" TRIM " + '\\n' }}"                      \
    "{% elif m.role == 'assistant' %}"                                                             \
    "{{ '[|assistant|]' + m.content" TRIM " + '[|endofturn|]\\n' }}"

// Granite 4.0 and 4.1: a tool call is the assistant's turn with <|tool_call|>.
#define GRANITE_4                                                                                  \
    "{% for m in messages %}{% if m.role == 'assistant_tool_call' %}"                              \
    "{{ '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' }}"                               \
    "{% else %}{{ '<|start_of_role|>' + m.role + '<|end_of_role|>' }}{% endif %}"                  \
    "{{ m.content + '<|end_of_text|>\\n' }}{% endfor %}" GEN(                                      \
        "<|start_of_role|>assistant<|end_of_role|>")

typedef struct preset {
    const char *name;  // llama.cpp's name (LLM_CHAT_TEMPLATES), the key --chat-template takes
    const char *jinja; // the source that renders as llama_chat_apply_template does for name
} preset;

// Sorted by name (strcmp), the order llama_chat_builtin_templates lists them in.
static const preset presets[] = {
    // Ant Group's Ling (bailing): "<role>ROLE</role>" before each content, no end token.
    {"bailing", "{% for m in messages %}{{ '<role>' + " BAILING_ROLE " + '</role>' + m.content }}"
                "{% endfor %}" GEN("<role>ASSISTANT</role>")},
    // Ring, Ling's reasoning sibling: the same, the generation prompt opening <think>.
    {"bailing-think",
     "{% for m in messages %}{{ '<role>' + " BAILING_ROLE " + '</role>' + m.content }}"
     "{% endfor %}" GEN("<role>ASSISTANT</role><think>")},
    // Ling 2.0: every turn closed with <|role_end|>; without a system message first, one
    // turning thinking off.
    {"bailing2", "{% if messages|length == 0 or messages[0].role != 'system' %}"
                 "{{ '<role>SYSTEM</role>detailed thinking off<|role_end|>' }}{% endif %}"
                 "{% for m in messages %}{{ '<role>' + " BAILING_ROLE " + '</role>' + m.content + "
                 "'<|role_end|>' }}{% endfor %}" GEN("<role>ASSISTANT</role>")},
    // THUDM's ChatGLM3-6B: "[gMASK]sop", then "<|role|>\n " before each content.
    {"chatglm3", "{{ '[gMASK]sop' }}{% for m in messages %}{{ '<|' + m.role + '|>\\n ' + "
                 "m.content }}{% endfor %}" GEN("<|assistant|>")},
    // GLM-4: "[gMASK]<sop>", then "<|role|>\n" before each content.
    {"chatglm4", "{{ '[gMASK]<sop>' }}{% for m in messages %}{{ '<|' + m.role + '|>\\n' + "
                 "m.content }}{% endfor %}" GEN("<|assistant|>\\n")},
    // ChatML (OpenAI's format; Qwen, OpenHermes, Yi, ...): <|im_start|>role\n ... <|im_end|>\n.
    {"chatml", "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + "
               "'<|im_end|>\\n' }}{% endfor %}" GEN("<|im_start|>assistant\\n")},
    // Cohere's Command R / R+: turn tokens per role, contents trimmed; other roles dropped.
    {"command-r",
     "{% for m in messages %}{% if m.role == 'system' %}"
     "{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + m.content" TRIM " + '<|END_OF_TURN_TOKEN|>' }}"
     "{% elif m.role == 'user' %}"
     "{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + m.content" TRIM " + '<|END_OF_TURN_TOKEN|>' }}"
     "{% elif m.role == 'assistant' %}"
     "{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' + m.content" TRIM
     " + '<|END_OF_TURN_TOKEN|>' }}"
     "{% endif %}{% endfor %}" GEN("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>")},
    // DeepSeek Coder instruct: "### Instruction:" / "### Response:" sections, <|EOT|> after a
    // reply, the system text as is.
    {"deepseek",
     "{% for m in messages %}{% if m.role == 'system' %}{{ m.content }}"
     "{% elif m.role == 'user' %}{{ '### Instruction:\\n' + m.content + '\\n' }}"
     "{% elif m.role == 'assistant' %}"
     "{{ '### Response:\\n' + m.content + '\\n<|EOT|>\\n' }}{% endif %}{% endfor %}" GEN(
         "### Response:\\n")},
    // DeepSeek-OCR: no template, the contents one after the other.
    {"deepseek-ocr", "{% for m in messages %}{{ m.content }}{% endfor %}"},
    // DeepSeek-V2: "User: " / "Assistant: " paragraphs, a reply closed by its end token.
    {"deepseek2",
     "{% for m in messages %}{% if m.role == 'system' %}{{ m.content + '\\n\\n' }}"
     "{% elif m.role == 'user' %}{{ 'User: ' + m.content + '\\n\\n' }}"
     "{% elif m.role == 'assistant' %}"
     "{{ 'Assistant: ' + m.content + '<｜end▁of▁sentence｜>' }}{% endif %}{% endfor %}" GEN(
         "Assistant:")},
    // DeepSeek-V3 / R1: <｜User｜> and <｜Assistant｜> markers, the system text first.
    {"deepseek3", "{% for m in messages %}{% if m.role == 'system' %}{{ m.content + '\\n\\n' }}"
                  "{% elif m.role == 'user' %}{{ '<｜User｜>' + m.content }}"
                  "{% elif m.role == 'assistant' %}"
                  "{{ '<｜Assistant｜>' + m.content + '<｜end▁of▁sentence｜>' }}{% endif %}"
                  "{% endfor %}" GEN("<｜Assistant｜>")},
    // LG's EXAONE MoE: "<|role|>\n", trimmed content, <|endofturn|>; tool turns too.
    {"exaone-moe",
     "{% for m in messages %}"
     "{% if m.role in ['system', 'user', 'assistant', 'tool'] %}"
     "{{ '<|' + m.role + '|>\\n' + m.content" TRIM " + '<|endofturn|>\\n' }}{% endif %}"
     "{% endfor %}" GEN("<|assistant|>\\n")},
    // LG's EXAONE 3.0.
    {"exaone3",
     "{% for m in messages %}" EXAONE_TURNS "{% endif %}{% endfor %}" GEN("[|assistant|]")},
    // LG's EXAONE 4.0: EXAONE 3's turns and tool results.
    {"exaone4", "{% for m in messages %}" EXAONE_TURNS "{% elif m.role == 'tool' %}"
                "{{ '[|tool|]' + m.content" TRIM
                " + '[|endofturn|]\\n' }}{% endif %}{% endfor %}" GEN("[|assistant|]")},
    // TII's Falcon 3: "<|role|>\n" and the content on its line.
    {"falcon3", "{% for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content + '\\n' }}"
                "{% endfor %}" GEN("<|assistant|>\\n")},
    // Google's Gemma: no system role, so the system texts (trimmed, joined) open the next
    // user turn; "assistant" is "model"; contents trimmed.
    {"gemma", "{% set ns = namespace(sys='') %}{% for m in messages %}"
              "{% if m.role == 'system' %}{% set ns.sys = ns.sys + m.content" TRIM " %}"
              "{% else %}{% set r = 'model' if m.role == 'assistant' else m.role %}"
              "{{ '<start_of_turn>' + r + '\\n' }}"
              "{% if ns.sys != '' and r != 'model' %}{{ ns.sys + '\\n\\n' }}"
              "{% set ns.sys = '' %}{% endif %}"
              "{{ m.content" TRIM
              " + '<end_of_turn>\\n' }}{% endif %}{% endfor %}" GEN("<start_of_turn>model\\n")},
    // Sber's GigaChat: "<s>" (with a leading system text), then user / assistant turns with
    // role and message separators; an empty functions list after each user turn.
    {"gigachat",
     "{% if messages|length > 0 and messages[0].role == 'system' %}"
     "{{ '<s>' + messages[0].content + '<|message_sep|>' }}{% set rest = messages[1:] %}"
     "{% else %}{{ '<s>' }}{% set rest = messages %}{% endif %}"
     "{% for m in rest %}{% if m.role == 'user' %}{{ 'user<|role_sep|>' + m.content + "
     "'<|message_sep|>available functions<|role_sep|>[]<|message_sep|>' }}"
     "{% elif m.role == 'assistant' %}{{ 'assistant<|role_sep|>' + m.content + "
     "'<|message_sep|>' }}{% endif %}{% endfor %}" GEN("assistant<|role_sep|>")},
    // GLM-Edge: "<|role|>\n" before each content, no end token.
    {"glmedge", "{% for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content }}{% endfor %}" GEN(
                    "<|assistant|>")},
    // OpenAI's gpt-oss (Harmony): <|start|>role<|message|>...; a reply ends with <|return|>.
    {"gpt-oss", "{% for m in messages %}{{ '<|start|>' + m.role + '<|message|>' + m.content + "
                "('<|return|>' if m.role == 'assistant' else '<|end|>') }}{% endfor %}" GEN(
                    "<|start|>assistant")},
    // IBM Granite 3.x: role markers, <|end_of_text|> after each turn.
    {"granite", "{% for m in messages %}{{ '<|start_of_role|>' + m.role + '<|end_of_role|>' }}"
                "{% if m.role == 'assistant_tool_call' %}{{ '<|tool_call|>' }}{% endif %}"
                "{{ m.content + '<|end_of_text|>\\n' }}{% endfor %}" GEN(
                    "<|start_of_role|>assistant<|end_of_role|>")},
    // IBM Granite 4.0.
    {"granite-4.0", GRANITE_4},
    // IBM Granite 4.1 (llama.cpp renders it as 4.0).
    {"granite-4.1", GRANITE_4},
    // xAI's Grok 2: System / Human / Assistant paragraphs with <|separator|>; the reply is not
    // trimmed.
    {"grok-2",
     "{% for m in messages %}{% if m.role == 'system' %}"
     "{{ 'System: ' + m.content" TRIM " + '<|separator|>\\n\\n' }}"
     "{% elif m.role == 'user' %}{{ 'Human: ' + m.content" TRIM " + '<|separator|>\\n\\n' }}"
     "{% elif m.role == 'assistant' %}{{ 'Assistant: ' + m.content + '<|separator|>\\n\\n' }}"
     "{% endif %}{% endfor %}" GEN("Assistant:")},
    // Tencent's Hunyuan dense (Hunyuan-4B-Instruct): a first system text, then user turns that
    // end by opening the assistant's; add_generation_prompt has no effect.
    {"hunyuan-dense",
     "{% for m in messages %}{% if loop.first and m.role == 'system' %}"
     "{{ m.content + '<｜hy_place▁holder▁no▁3｜>' }}{% endif %}"
     "{% if m.role == 'assistant' %}{{ '<｜hy_Assistant｜>' + m.content + "
     "'<｜hy_place▁holder▁no▁2｜>' }}"
     "{% elif m.role == 'user' %}{{ '<｜hy_User｜>' + m.content + '<｜hy_Assistant｜>' }}"
     "{% endif %}{% endfor %}"},
    // Tencent's Hunyuan-A13B: <|startoftext|> and extra tokens per role; no generation prompt.
    {"hunyuan-moe",
     "{% for m in messages %}{% if m.role == 'system' %}"
     "{{ '<|startoftext|>' + m.content + '<|extra_4|>' }}"
     "{% elif m.role == 'assistant' %}{{ m.content + '<|eos|>' }}"
     "{% else %}{{ '<|startoftext|>' + m.content + '<|extra_0|>' }}{% endif %}{% endfor %}"},
    // Tencent's HunyuanOCR / HunyuanVL: each content followed by its role's marker.
    {"hunyuan-vl",
     "{{ '<｜hy_begin▁of▁sentence｜>' }}{% for m in messages %}"
     "{% if loop.first and m.role == 'system' %}{{ m.content + '<｜hy_place▁holder▁no▁3｜>' }}"
     "{% elif m.role == 'user' %}{{ m.content + '<｜hy_User｜>' }}"
     "{% elif m.role == 'assistant' %}{{ m.content + '<｜hy_Assistant｜>' }}{% endif %}"
     "{% endfor %}"},
    // Moonshot's Kimi K2: <|im_role|>role<|im_middle|> per known role, <|im_end|> after every
    // content (a message of another role keeps its content and end).
    {"kimi-k2",
     "{% for m in messages %}{% if m.role == 'system' %}"
     "{{ '<|im_system|>system<|im_middle|>' }}"
     "{% elif m.role == 'user' %}{{ '<|im_user|>user<|im_middle|>' }}"
     "{% elif m.role == 'assistant' %}{{ '<|im_assistant|>assistant<|im_middle|>' }}"
     "{% elif m.role == 'tool' %}{{ '<|im_system|>tool<|im_middle|>' }}{% endif %}"
     "{{ m.content + '<|im_end|>' }}{% endfor %}" GEN("<|im_assistant|>assistant<|im_middle|>")},
    // Llama 2 without system support: the system text and a newline inside the first [INST].
    {"llama2", LLAMA2("m.content", "[INST] ", "c + '\\n'")},
    // Llama 2 with <<SYS>>.
    {"llama2-sys", LLAMA2("m.content", "[INST] ", LLAMA2_SYS)},
    // Llama 2 with <<SYS>> and "<s>" before each later [INST].
    {"llama2-sys-bos", LLAMA2("m.content", "<s>[INST] ", LLAMA2_SYS)},
    // Llama 2 with <<SYS>>, contents trimmed (Meta's template strips them).
    {"llama2-sys-strip", LLAMA2("m.content" TRIM, "[INST] ", LLAMA2_SYS)},
    // Meta's Llama 3 / 3.x: header ids around the role, trimmed contents, <|eot_id|>.
    {"llama3", "{% for m in messages %}{{ '<|start_header_id|>' + m.role + "
               "'<|end_header_id|>\\n\\n' + m.content" TRIM " + '<|eot_id|>' }}{% endfor %}" GEN(
                   "<|start_header_id|>assistant<|end_header_id|>\\n\\n")},
    // Meta's Llama 4: <|header_start|>role<|header_end|>, trimmed contents, <|eot|>.
    {"llama4", "{% for m in messages %}{{ '<|header_start|>' + m.role + '<|header_end|>\\n\\n' "
               "+ m.content" TRIM
               " + '<|eot|>' }}{% endfor %}" GEN("<|header_start|>assistant<|header_end|>\\n\\n")},
    // Infinigence's Megrez: <|role_start|>role<|role_end|>content<|turn_end|>.
    {"megrez",
     "{% for m in messages %}{{ '<|role_start|>' + m.role + '<|role_end|>' + "
     "m.content + '<|turn_end|>' }}{% endfor %}" GEN("<|role_start|>assistant<|role_end|>")},
    // MiniCPM: <用户>, the trimmed user text, <AI>; other contents trimmed, bare.
    {"minicpm", "{% for m in messages %}{% if m.role == 'user' %}"
                "{{ '<用户>' + m.content" TRIM " + '<AI>' }}{% else %}{{ m.content" TRIM " }}"
                "{% endif %}{% endfor %}"},
    // Mistral v1: " [INST] ... [/INST]", a space before the reply.
    {"mistral-v1", MISTRAL(" ", " ", "m.content")},
    // Mistral v3: "[INST] ... [/INST]", the reply trimmed after a space.
    {"mistral-v3", MISTRAL("", " ", "m.content" TRIM)},
    // Mistral v3-tekken: no spaces at all.
    {"mistral-v3-tekken", MISTRAL("", "", "m.content")},
    // Mistral v7 (Mistral Large 2411).
    {"mistral-v7", MISTRAL_V7(" ")},
    // Mistral v7-tekken (Mistral Small 3.1).
    {"mistral-v7-tekken", MISTRAL_V7("")},
    // mlabonne's AlphaMonarch: "role\ncontent</s>\n", "<s>" before every turn but the first.
    {"monarch", "{% for m in messages %}{{ ('' if loop.first else '<s>') + m.role + '\\n' + "
                "m.content + '</s>\\n' }}{% endfor %}" GEN("<s>assistant\\n")},
    // OpenChat 3.5: "GPT4 Correct Role: " (first letter upper-cased), <|end_of_turn|>.
    {"openchat", "{% for m in messages %}{% if m.role == 'system' %}"
                 "{{ m.content + '<|end_of_turn|>' }}{% else %}"
                 "{{ 'GPT4 Correct ' + m.role[:1]|upper + m.role[1:] + ': ' + m.content + "
                 "'<|end_of_turn|>' }}{% endif %}{% endfor %}" GEN("GPT4 Correct Assistant:")},
    // OrionStar's Orion-14B-Chat: "Human: " turns ending in "Assistant: </s>", the system
    // texts joined into the next one; no generation prompt.
    {"orion", "{% set ns = namespace(sys='') %}{% for m in messages %}"
              "{% if m.role == 'system' %}{% set ns.sys = ns.sys + m.content %}"
              "{% elif m.role == 'user' %}{{ 'Human: ' }}{% if ns.sys != '' %}"
              "{{ ns.sys + '\\n\\n' }}{% set ns.sys = '' %}{% endif %}"
              "{{ m.content + '\\n\\nAssistant: </s>' }}"
              "{% else %}{{ m.content + '</s>' }}{% endif %}{% endfor %}"},
    // Huawei's openPangu-Embedded: "[unused9]角色：content[unused10]" (system, user, assistant,
    // tool, function), an empty system turn when none comes first.
    {"pangu-embedded",
     "{% for m in messages %}{% if loop.first and m.role != 'system' %}"
     "{{ '[unused9]系统：[unused10]' }}{% endif %}"
     "{% if m.role == 'system' %}{{ '[unused9]系统：' + m.content + '[unused10]' }}"
     "{% elif m.role == 'user' %}{{ '[unused9]用户：' + m.content + '[unused10]' }}"
     "{% elif m.role == 'assistant' %}{{ '[unused9]助手：' + m.content + '[unused10]' }}"
     "{% elif m.role == 'tool' %}{{ '[unused9]工具：' + m.content + '[unused10]' }}"
     "{% elif m.role == 'function' %}{{ '[unused9]方法：' + m.content + '[unused10]' }}"
     "{% endif %}{% endfor %}" GEN("[unused9]助手：")},
    // Microsoft's Phi-3: "<|role|>\ncontent<|end|>\n".
    {"phi3", "{% for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content + '<|end|>\\n' }}"
             "{% endfor %}" GEN("<|assistant|>\\n")},
    // Microsoft's Phi-4: ChatML with <|im_sep|> after the role and no newlines.
    {"phi4", "{% for m in messages %}{{ '<|im_start|>' + m.role + '<|im_sep|>' + m.content + "
             "'<|im_end|>' }}{% endfor %}" GEN("<|im_start|>assistant<|im_sep|>")},
    // RWKV World: "User: " / "Assistant: " paragraphs of trimmed text; the prompt
    // "Assistant:" follows a last user turn, whatever add_generation_prompt says.
    {"rwkv-world", "{% for m in messages %}{% if m.role == 'system' %}"
                   "{{ 'System: ' + m.content" TRIM " + '\\n\\n' }}"
                   "{% elif m.role == 'user' %}{{ 'User: ' + m.content" TRIM " + '\\n\\n' }}"
                   "{% if loop.last %}{{ 'Assistant:' }}{% endif %}"
                   "{% elif m.role == 'assistant' %}"
                   "{{ 'Assistant: ' + m.content" TRIM " + '\\n\\n' }}{% endif %}{% endfor %}"},
    // ByteDance's Seed-OSS: <seed:bos>role\ncontent<seed:eos>, replies trimmed.
    {"seed_oss", "{% for m in messages %}{{ '<seed:bos>' + m.role + '\\n' + "
                 "(m.content" TRIM " if m.role == 'assistant' else m.content) + '<seed:eos>' }}"
                 "{% endfor %}" GEN("<seed:bos>assistant\\n")},
    // Hugging Face's SmolVLM: "<|im_start|>" once, then "User: " / "Assistant: " lines ending
    // in <end_of_utterance>.
    {"smolvlm", "{{ '<|im_start|>' }}{% for m in messages %}"
                "{% if m.role == 'system' %}{{ m.content + '\\n\\n' }}"
                "{% elif m.role == 'user' %}{{ 'User: ' + m.content + '<end_of_utterance>\\n' }}"
                "{% else %}{{ 'Assistant: ' + m.content + '<end_of_utterance>\\n' }}{% endif %}"
                "{% endfor %}" GEN("Assistant:")},
    // Upstage's Solar Open: <|begin|>role<|content|>content<|end|>.
    {"solar-open", "{% for m in messages %}{{ '<|begin|>' + m.role + '<|content|>' + m.content "
                   "+ '<|end|>' }}{% endfor %}" GEN("<|begin|>assistant")},
    // Vicuna 1.1: the system text as a paragraph, "USER: " and "ASSISTANT: " lines.
    {"vicuna", "{% for m in messages %}{% if m.role == 'system' %}{{ m.content + '\\n\\n' }}"
               "{% elif m.role == 'user' %}{{ 'USER: ' + m.content + '\\n' }}"
               "{% elif m.role == 'assistant' %}{{ 'ASSISTANT: ' + m.content + '</s>\\n' }}"
               "{% endif %}{% endfor %}" GEN("ASSISTANT:")},
    // Orca-Vicuna: Vicuna with a "SYSTEM: " line.
    {"vicuna-orca", "{% for m in messages %}{% if m.role == 'system' %}"
                    "{{ 'SYSTEM: ' + m.content + '\\n' }}"
                    "{% elif m.role == 'user' %}{{ 'USER: ' + m.content + '\\n' }}"
                    "{% elif m.role == 'assistant' %}{{ 'ASSISTANT: ' + m.content + '</s>\\n' }}"
                    "{% endif %}{% endfor %}" GEN("ASSISTANT:")},
    // YandexGPT: " Пользователь: " and " Ассистент: " paragraphs; system messages dropped.
    {"yandex", "{% for m in messages %}{% if m.role == 'user' %}"
               "{{ ' Пользователь: ' + m.content + '\\n\\n' }}"
               "{% elif m.role == 'assistant' %}{{ ' Ассистент: ' + m.content + '\\n\\n' }}"
               "{% endif %}{% endfor %}" GEN(" Ассистент:[SEP]")},
    // Zephyr as StableLM-Zephyr writes it: "<|role|>\ncontent<|endoftext|>\n".
    {"zephyr", "{% for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content + "
               "'<|endoftext|>\\n' }}{% endfor %}" GEN("<|assistant|>\\n")},
};

#define N_PRESETS (sizeof presets / sizeof presets[0])

const char *mint_chat_preset(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0) return presets[i].jinja;
    return NULL;
}

const char *mint_chat_preset_name(size_t i) {
    return i < N_PRESETS ? presets[i].name : NULL;
}
