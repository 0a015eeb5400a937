// page.mjs - mint-serve's chat page at / in headless Chromium (Debian's, driven by npm
// `playwright-core`, installed outside the repository by tools/scripts/npm-deps.sh), run by
// tests/test_serve_deploy.c:
//
//   node tests/serve/page.mjs NPM_DIR URL SCREENSHOT.png
//
// Types a message into #input, clicks #send, waits for the assistant's reply to be done
// (data-state="done") with text in it, checks that hovering each reply token shows the token id
// the server streamed for it (and marks that id among the alternatives), that the next-token
// candidate table is filled and that no console error or page error happened, and saves a
// screenshot. Prints "page: N passed, 0 failed"; exits 1 on a failure.
import { createRequire } from "node:module";
import { join } from "node:path";

const [npmDir, url, shot] = process.argv.slice(2);
const require = createRequire(join(npmDir, "node_modules", "x.js"));
const { chromium } = require("playwright-core");

// As tests/helpers/browser.c: headless as root on a machine with no network.
const browser = await chromium.launch({
  executablePath: process.env.MINT_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--mute-audio"],
  timeout: 60000,
});
let passed = 0, failed = 0;
const errors = [];
function check(cond, what, detail) {
  if (cond) { passed++; console.log(`ok ${what}`); return; }
  failed++;
  console.log(`FAIL ${what}: ${detail === undefined ? "" : JSON.stringify(detail)}`);
}
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.setDefaultTimeout(60000);
  await page.goto(url + "/", { waitUntil: "load" });
  check((await page.title()) === "mint chat", "title", await page.title());
  await page.waitForSelector("#cands tr"); // the first peek: candidates for an empty chat
  await page.fill("#input", "Tell me a story about a cat");
  const streamed = page.waitForResponse((r) => r.url().endsWith("/v1/chat/completions"));
  await page.click("#send");
  await page.waitForSelector('.msg.user');
  const reply = await page.waitForSelector('.msg.assistant[data-state="done"]');
  const text = (await reply.textContent()).trim();
  check(text.length > 0, "the reply has text", text);
  check(!text.startsWith("error"), "the reply is not an error", text);
  const spans = await reply.$$(".tok");
  check(spans.length > 0, "the reply's tokens are coloured spans");
  // What the server streamed to the page: each token's id and its alternatives' ids.
  const sse = await (await streamed).text();
  const sent = [];
  for (const ev of sse.split("\n\n")) {
    if (!ev.startsWith("data: {")) continue;
    const ch = JSON.parse(ev.slice(6)).choices[0];
    for (const t of (ch && ch.logprobs && ch.logprobs.content) || [])
      sent.push({ id: t.id, alt: t.top_logprobs.map((a) => a.id) });
  }
  check(sent.length === spans.length && sent.every((t) => Number.isInteger(t.id) && t.id > 0),
        "the server streamed a non-zero id for each token", sent.map((t) => t.id));
  // The ids are the tokens': /detokenize gives back the spans' text (less a SentencePiece space;
  // an empty piece shows as a zero-width space).
  const detok = await page.evaluate(async (ids) => (await (await fetch("/detokenize", {
    method: "POST", body: JSON.stringify({ tokens: ids }) })).json()).content, sent.map((t) => t.id));
  const spanText = (await Promise.all(spans.map((s) => s.textContent()))).join("");
  check(detok.trim() === spanText.replace(/\u200b/g, "").trim(),
        "the streamed ids detokenize to the reply's tokens", [detok, spanText]);
  // Hovering each token shows its id and marks it (once) among the alternatives it was in. A
  // line break's span has no width to hover: it gets the mouseenter event directly.
  const shown = [], marked = [];
  for (const s of spans) {
    if (await s.isVisible()) await s.hover();
    else await s.dispatchEvent("mouseenter");
    const head = await page.textContent("#tip .tip-head");
    const m = /\(id (\d+)\)/.exec(head || "");
    shown.push(m ? +m[1] : null);
    marked.push(await page.$$eval("#tip .alts tr.me", (r) => r.length));
  }
  const ids = sent.map((t) => t.id);
  check(shown.length === ids.length && shown.every((id, i) => id === ids[i]),
        "hovering each token shows the id the server sent", { shown, ids });
  check(marked.every((n, i) => n === (sent[i] && sent[i].alt.includes(ids[i]) ? 1 : 0)),
        "the hovered token's row among the alternatives is marked", marked);
  // After the reply the page asks /v1/next again; the table fills with candidates.
  await page.waitForFunction(() => document.querySelectorAll("#cands tr").length >= 10);
  const rows = await page.$$eval("#cands tr", (r) => r.length);
  check(rows >= 10, "the next-token table is filled", rows);
  const summary = await page.textContent("#next-summary");
  check(/survive/.test(summary), "the candidates summary", summary);
  await page.locator(".tok").first().hover();
  check((await page.textContent("#tip")).length > 0, "hovering a token explains it");
  await page.screenshot({ path: shot, fullPage: true });
  check(errors.length === 0, "no console or page error", errors);
} catch (e) {
  check(false, "the page ran", String(e));
} finally {
  await browser.close();
}
console.log(`page: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
