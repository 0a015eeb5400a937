// views.js - the views mint's pages share (the report of mint-run / mint-perplexity, and
// mint-serve's chat page): tokens coloured by their probability with a panel of alternatives,
// a heatmap, line charts and bars. Plain browser JavaScript, no library, no network.
"use strict";

const mintViews = (() => {
  // Background for a probability: red (unlikely) through yellow to green (certain).
  function colorFor(p) {
    if (p === null || p === undefined) return "transparent";
    const hue = Math.round(120 * Math.max(0, Math.min(1, p)));
    return `hsl(${hue}, 75%, 82%)`;
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }

  // Shows what a token's text is, with the invisible made visible.
  function shown(piece) {
    if (piece === "") return "∅";
    return piece.replace(/\n/g, "↵").replace(/ /g, "·");
  }

  // A span for one token: its text, coloured by p; hover/click calls onPick(tok, span).
  function tokenSpan(tok, onPick) {
    const s = document.createElement("span");
    s.className = "tok" + (tok.gen ? " gen" : " given") + (tok.flip ? " flip" : "");
    s.textContent = tok.piece.length ? tok.piece : "\u200b";
    s.style.background = colorFor(tok.p);
    s.addEventListener("mouseenter", () => onPick(tok, s));
    s.addEventListener("click", () => onPick(tok, s));
    return s;
  }

  // The panel for one token: its probability, the entropy, the alternatives as bars, and a
  // compare model's view when there is one.
  function tipHtml(tok) {
    let h = `<div class="tip-head"><b>${esc(shown(tok.piece))}</b> (id ${tok.id})`;
    if (tok.p !== null && tok.p !== undefined) h += `, p = ${tok.p.toFixed(4)}`;
    if (tok.H !== null && tok.H !== undefined) h += `, entropy ${tok.H.toFixed(3)} nats`;
    h += "</div>";
    if (tok.alt && tok.alt.length) {
      h += '<table class="alts">';
      for (const [id, p, piece] of tok.alt) {
        const w = Math.max(1, Math.round(160 * p));
        const me = id === tok.id ? ' class="me"' : "";
        h += `<tr${me}><td>${esc(shown(piece))}</td><td><span class="bar" style="width:${w}px;background:${colorFor(p)}"></span></td><td>${p.toFixed(4)}</td></tr>`;
      }
      h += "</table>";
    }
    if (tok.kl !== null && tok.kl !== undefined) {
      h += `<div>KL(model ‖ compare) = ${tok.kl.toExponential(3)}`;
      if (tok.cmp !== undefined) h += `; compare's top-1: <b>${esc(shown(tok.cmp_piece))}</b>${tok.flip ? " (differs)" : ""}`;
      h += "</div>";
    }
    if (tok.ms !== null && tok.ms !== undefined) h += `<div>evaluated in ${tok.ms.toFixed(2)} ms</div>`;
    return h;
  }

  // Draws a square matrix (rows x cols of values 0..1, lower triangle) on a canvas; returns the
  // number of non-white pixels written (the self-test reads the canvas back).
  function drawHeatmap(canvas, T, value, highlightRow) {
    const ctx = canvas.getContext("2d");
    const cell = Math.max(1, Math.floor(Math.min(canvas.width, canvas.height) / Math.max(1, T)));
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    for (let q = 0; q < T; q++) {
      for (let j = 0; j <= q; j++) {
        const v = Math.sqrt(value(q, j)); // sqrt: small weights stay visible
        const c = Math.round(255 * (1 - v));
        ctx.fillStyle = `rgb(${c},${c},255)`;
        ctx.fillRect(j * cell, q * cell, cell, cell);
      }
    }
    if (highlightRow !== undefined && highlightRow >= 0 && highlightRow < T) {
      ctx.strokeStyle = "#e33";
      ctx.strokeRect(0, highlightRow * cell, (highlightRow + 1) * cell, cell);
    }
    return cell * T;
  }

  // A line chart of one or more series [{name, values, color}] on a canvas.
  function drawLines(canvas, series, yLabel) {
    const ctx = canvas.getContext("2d");
    const W = canvas.width, H = canvas.height, pad = 34;
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, W, H);
    let n = 0, max = 0;
    for (const s of series)
      for (const v of s.values)
        if (v !== null && isFinite(v)) { n = Math.max(n, s.values.length); max = Math.max(max, v); }
    ctx.strokeStyle = "#999";
    ctx.strokeRect(pad, 6, W - pad - 6, H - pad);
    ctx.fillStyle = "#333";
    ctx.font = "11px sans-serif";
    ctx.fillText(max.toPrecision(3), 2, 14);
    ctx.fillText(yLabel, 2, H - 6);
    if (n < 1 || max <= 0) return;
    for (const s of series) {
      ctx.strokeStyle = s.color;
      ctx.beginPath();
      let started = false;
      s.values.forEach((v, i) => {
        if (v === null || !isFinite(v)) return;
        const x = pad + ((W - pad - 6) * i) / Math.max(1, n - 1);
        const y = 6 + (H - pad) * (1 - v / max);
        if (!started) { ctx.moveTo(x, y); started = true; } else ctx.lineTo(x, y);
      });
      ctx.stroke();
    }
  }

  // Horizontal bars for [name, value] pairs, largest first, with their share of the total.
  function bars(el, pairs, unit) {
    const total = pairs.reduce((a, p) => a + p[1], 0) || 1;
    const sorted = pairs.slice().sort((a, b) => b[1] - a[1]);
    el.innerHTML = sorted
      .map(([name, v]) => `<div class="brow"><span class="bname">${esc(name)}</span><span class="bar" style="width:${Math.max(1, Math.round((300 * v) / total))}px"></span> ${(v * (unit === "ms" ? 1e3 : 1)).toFixed(2)} ${unit} (${((100 * v) / total).toFixed(1)}%)</div>`)
      .join("");
  }

  // Decodes base64 into bytes.
  function bytes(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  return { colorFor, esc, shown, tokenSpan, tipHtml, drawHeatmap, drawLines, bars, bytes };
})();
