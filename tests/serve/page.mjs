// page.mjs - mint-serve's chat page at / in headless Chromium (Debian's, driven by npm
// `playwright-core`, installed outside the repository by tools/npm-deps.sh), run by
// tests/test_serve_deploy.c:
//
//   node tests/serve/page.mjs NPM_DIR URL SCREENSHOT.png
//
// Types a message into #input, clicks #send, waits for the assistant's reply to be done
// (data-state="done") with text in it, checks the next-token candidate table is filled and that
// no console error or page error happened, and saves a screenshot. Prints
// "page: N passed, 0 failed"; exits 1 on a failure.
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
  await page.click("#send");
  await page.waitForSelector('.msg.user');
  const reply = await page.waitForSelector('.msg.assistant[data-state="done"]');
  const text = (await reply.textContent()).trim();
  check(text.length > 0, "the reply has text", text);
  check(!text.startsWith("error"), "the reply is not an error", text);
  check((await reply.$$(".tok")).length > 0, "the reply's tokens are coloured spans");
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
