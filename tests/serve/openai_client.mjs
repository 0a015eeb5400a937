// openai_client.mjs - mint-serve through OpenAI's official Node client (npm `openai`, installed
// outside the repository by tools/scripts/npm-deps.sh), run by tests/test_serve_deploy.c:
//
//   node tests/serve/openai_client.mjs NPM_DIR URL API_KEY EXPECT_JSON
//
// EXPECT_JSON holds mint-run's temperature-0 answers: {"model", "prompt", "completion", "n",
// "user", "chat", "chat_n"}. Checks chat and completions, with and without streaming, their
// equality with mint-run, logprobs, the usage, and a 400 the client reports with its param.
// Prints one line per check and "openai_client: N passed, 0 failed"; exits 1 on a failure.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [npmDir, url, apiKey, expectPath] = process.argv.slice(2);
const require = createRequire(join(npmDir, "node_modules", "x.js"));
const { OpenAI } = require("openai");
const want = JSON.parse(readFileSync(expectPath, "utf8"));
const client = new OpenAI({ baseURL: url + "/v1", apiKey, maxRetries: 0, timeout: 60000 });

let passed = 0;
function check(cond, what, detail) {
  if (!cond) {
    console.log(`FAIL ${what}: ${detail === undefined ? "" : JSON.stringify(detail)}`);
    console.log(`openai_client: ${passed} passed, 1 failed`);
    process.exit(1);
  }
  passed++;
  console.log(`ok ${what}`);
}

const models = await client.models.list();
check(models.data.some((m) => m.id === want.model), "models.list has the model", models.data);

const messages = [{ role: "user", content: want.user }];
const chat = await client.chat.completions.create({
  model: want.model, messages, temperature: 0, max_tokens: want.chat_n });
check(chat.object === "chat.completion", "chat object", chat.object);
check(chat.choices[0].message.role === "assistant", "chat role", chat.choices[0].message);
check(chat.choices[0].message.content === want.chat, "chat equals mint-run -cnv",
      [chat.choices[0].message.content, want.chat]);
check(chat.usage.total_tokens === chat.usage.prompt_tokens + chat.usage.completion_tokens,
      "chat usage adds up", chat.usage);

let text = "", finish = null, chunks = 0, usage = null;
const stream = await client.chat.completions.create({
  model: want.model, messages, temperature: 0, max_tokens: want.chat_n, stream: true,
  stream_options: { include_usage: true } });
for await (const c of stream) {
  chunks++;
  if (c.usage) usage = c.usage;
  for (const ch of c.choices) {
    text += ch.delta.content || "";
    if (ch.finish_reason) finish = ch.finish_reason;
  }
}
check(text === want.chat, "streamed chat equals mint-run -cnv", [text, want.chat]);
check(chunks > 2 && (finish === "length" || finish === "stop"), "stream chunks and finish",
      [chunks, finish]);
check(usage && usage.completion_tokens === chat.usage.completion_tokens, "stream usage", usage);

const lp = await client.chat.completions.create({
  model: want.model, messages, temperature: 0, max_tokens: 8, logprobs: true, top_logprobs: 2 });
const content = lp.choices[0].logprobs.content;
check(content.length === lp.usage.completion_tokens, "chat logprobs: one per token",
      [content.length, lp.usage]);
check(content.every((t) => t.logprob <= 0 && t.top_logprobs.length === 2 &&
                           t.top_logprobs[0].token === t.token && Array.isArray(t.bytes)),
      "chat logprobs: shapes", content[0]);
check(content.map((t) => t.token).join("") === lp.choices[0].message.content,
      "chat logprobs: tokens make the text", content.map((t) => t.token));

const cmpl = await client.completions.create({
  model: want.model, prompt: want.prompt, temperature: 0, max_tokens: want.n, logprobs: 2 });
check(cmpl.choices[0].text === want.completion, "completion equals mint-run",
      [cmpl.choices[0].text, want.completion]);
const clp = cmpl.choices[0].logprobs;
check(clp.tokens.length === cmpl.usage.completion_tokens && clp.token_logprobs.length ===
      clp.tokens.length && clp.top_logprobs.length === clp.tokens.length &&
      clp.text_offset.length === clp.tokens.length, "completion logprobs: shapes", clp);
check(clp.tokens.join("") === cmpl.choices[0].text, "completion logprobs: tokens make the text");

text = "";
const cs = await client.completions.create({
  model: want.model, prompt: want.prompt, temperature: 0, max_tokens: want.n, stream: true });
for await (const c of cs) for (const ch of c.choices) text += ch.text;
check(text === want.completion, "streamed completion equals mint-run", [text, want.completion]);

try {
  await client.chat.completions.create({ model: want.model, messages, temperature: 7 });
  check(false, "temperature 7 refused");
} catch (e) {
  check(e.status === 400 && e.param === "temperature", "400 names its param",
        [e.status, e.param, e.message]);
}
try {
  await new OpenAI({ baseURL: url + "/v1", apiKey: "wrong", maxRetries: 0 }).models.list();
  check(false, "a wrong key refused");
} catch (e) {
  check(e.status === 401, "a wrong key gets 401", e.status);
}
console.log(`openai_client: ${passed} passed, 0 failed`);
