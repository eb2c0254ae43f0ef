#pragma once

#include <string_view>

namespace vigil {

// GET / : one self-contained page (no external assets: the box may have no internet). It polls
// /api/status every 2 s for the tiles and /api/events for the recent events, and keeps each
// camera's picture live: the next annotated frame is asked for as soon as the last one arrived,
// no faster than the camera's detection rate (at most 10 a second), so a slow viewer skips
// frames instead of queueing them; the server encodes each frame once whoever watches. Zones
// and masks are drawn over the picture (SVG, from /api/status), their labels as HTML placed in
// pixels and kept inside the picture (placeTags); a legend says what the tiles' border colours
// and the boxes' colours mean; the tiles fill the page's width; a tile keeps its camera's
// aspect ratio and a click makes it as wide as the page. With "regions" ticked in the header (or
// `?regions` in the address), a
// camera on detection regions has the latest detection's regions drawn too (dashed: motion
// green, track orange, edge magenta; the whole picture is not drawn). Times are the browser's
// local time, with their date when not today. `#history` shows the history view instead of the
// live one (history_page.h, which the page is served with: statusPage()); the live pictures and
// the recent events rest while it shows. The page ends after its script: kStatusPageEnd closes
// it, after the history view.
inline constexpr std::string_view kStatusPage = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
  header { padding: 10px 16px; background: #222; display: flex; gap: 8px 24px; flex-wrap: wrap; }
  header b { color: #fff; }
  h1 { font-size: 16px; margin: 16px 12px 0; }
  #cameras { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(420px, 100%), 1fr));
             gap: 12px; padding: 12px; }
  .camera { background: #1c1c1c; border-radius: 6px; overflow: hidden; border: 2px solid #333;
            cursor: zoom-in; min-width: 0; }
  .camera.big { grid-column: 1 / -1; cursor: zoom-out; }
  .camera.present { border-color: #e0a000; }
  .camera.down { border-color: #a02020; }
  .view { position: relative; background: #000; aspect-ratio: 16 / 9; }
  .view img, .view svg { position: absolute; inset: 0; width: 100%; height: 100%; }
  .view img { object-fit: contain; }
  .view img[hidden], .view .placeholder[hidden] { display: none; }
  .view .placeholder { position: absolute; inset: 0; display: flex; align-items: center;
                       justify-content: center; color: #888; padding: 12px; text-align: center; }
  .view polygon.zone { fill: rgba(0, 160, 255, 0.12); stroke: #39f; stroke-width: 2;
                       vector-effect: non-scaling-stroke; }
  .view polygon.zone.present { fill: rgba(255, 170, 0, 0.18); stroke: #fa0; }
  .view polygon.mask { fill: rgba(0, 0, 0, 0.55); stroke: #777; stroke-dasharray: 4 3;
                       vector-effect: non-scaling-stroke; }
  .view polyline.line { fill: none; stroke: #3e3; stroke-width: 2;
                        vector-effect: non-scaling-stroke; }
  .view polyline.line-in { fill: none; stroke: #3e3; stroke-width: 1.5;
                           vector-effect: non-scaling-stroke; }
  .view rect.region { fill: none; stroke-width: 1.5; stroke-dasharray: 5 3;
                     vector-effect: non-scaling-stroke; }
  .view rect.region.motion { stroke: #4d4; }
  .view rect.region.track { stroke: #f90; }
  .view rect.region.edge { stroke: #e4e; }
  /* Labels of zones and lines: HTML over the picture, placed in pixels and kept inside it. */
  .view .tags { position: absolute; inset: 0; pointer-events: none; overflow: hidden; }
  .view .tag { position: absolute; left: 0; top: 0; font-size: 12px; line-height: 1.3;
               color: #fff; background: rgba(0, 0, 0, 0.65); padding: 1px 5px; border-radius: 3px;
               width: max-content; max-width: calc(100% - 4px); box-sizing: border-box; }
  .view .tag.line { border-left: 3px solid #3e3; }
  .view .tag.zone { border-left: 3px solid #39f; }
  .camera h2 .badge { font-size: 12px; font-weight: normal; margin-left: 8px; padding: 1px 6px;
                      border-radius: 3px; background: #e0a000; color: #000; display: none; }
  .camera.present h2 .badge { display: inline; }
  .camera.down h2 .badge { display: inline; background: #a02020; color: #fff; }
  #legend { margin: 8px 12px 0; color: #aaa; font-size: 12px; display: flex; flex-wrap: wrap;
            gap: 4px 10px; }
  #legend span { white-space: nowrap; }
  #legend i { display: inline-block; width: 12px; height: 12px; vertical-align: -2px;
              margin-right: 4px; border-radius: 2px; }
  .info { padding: 8px 10px; display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; }
  .info span { overflow-wrap: anywhere; min-width: 0; }
  .camera h2 { font-size: 16px; margin: 0; grid-column: 1 / 3; }
  .label { color: #999; }
  #error { color: #f66; padding: 0 16px; }
  #events { list-style: none; margin: 0; padding: 0 12px 16px; display: grid; gap: 8px; }
  #events li { display: grid; grid-template-columns: 120px 1fr; gap: 10px; background: #1c1c1c;
               border-radius: 6px; padding: 6px; align-items: center; }
  #events img { width: 120px; aspect-ratio: 16 / 9; object-fit: cover; background: #000; }
  #events .none { color: #888; padding: 6px; }
  header nav { display: flex; gap: 12px; }
  header nav a { color: #9cf; }
  body[data-view="live"] header nav a[href="#"], body[data-view="history"] header nav
    a[href="#history"] { color: #fff; font-weight: bold; text-decoration: none; }
  /* The live view's parts while the history shows (the ids: their display is set by id). */
  body[data-view="history"] :is(.live, #cameras, #events) { display: none; }
</style>
</head>
<body>
<header>
  <span><b>Vigil</b> <span id="node"></span> <span id="version" class="label"></span></span>
  <nav><a href="#">live</a> <a href="#history">history</a></nav>
  <span>backend <b id="backend">?</b> <span id="device" class="label"></span></span>
  <span>MQTT <b id="mqtt">?</b></span>
  <label><input type="checkbox" id="show-regions"> regions</label>
  <span class="label" id="updated"></span>
</header>
<div id="error"></div>
<p id="legend" class="live">
  <span title="a card's orange border: a person is present"><i style="border: 2px solid
    #e0a000"></i>person present</span>
  <span title="a card's red border: the camera is down"><i style="border: 2px solid
    #a02020"></i>camera down</span>
  <span title="a red box: a person detected in this frame"><i style="border: 2px solid
    #e62828"></i>person seen</span>
  <span title="an orange box: a tracked person not seen in this frame, where tracking expects
    them"><i style="border: 2px solid #e6a028"></i>tracked, not seen</span>
  <span title="a green line counts people crossing it; its arrow points the way counted as
    in"><i style="background: #3e3"></i>line (arrow: in)</span>
</p>
<main id="cameras" class="live"></main>
<h1 class="live">Recent events</h1>
<ul id="events" class="live"><li class="none">loading…</li></ul>
<script>
"use strict";
const tiles = new Map();
const SVG = "http://www.w3.org/2000/svg";

function localTime(iso) { return iso ? new Date(iso).toLocaleTimeString() : "-"; }
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() &&
      a.getDate() === b.getDate();
}
// A local day as "7 Dec" (with the year when not this one).
function dayText(d) {
  return d.getDate() + " " + MONTHS[d.getMonth()] +
      (d.getFullYear() === new Date().getFullYear() ? "" : " " + d.getFullYear());
}
function clock(d) {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map(n => String(n).padStart(2, "0"))
      .join(":");
}
// A time with its date ("7 Dec 11:40:01"); `unlessToday`: the time alone when it is today's.
function when(iso, unlessToday) {
  if (!iso) return "-";
  const d = new Date(iso);
  return unlessToday && sameDay(d, new Date()) ? clock(d) : dayText(d) + " " + clock(d);
}
function ago(iso) {
  const s = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  return s < 60 ? s + " s ago" : Math.round(s / 60) + " min ago";
}

// The live picture: the next frame as soon as the last arrived, at most at the detection rate.
function live(el) {
  const img = el.querySelector("img");
  img.onload = () => {
    img.hidden = false;
    el.querySelector(".placeholder").hidden = true;
    el.querySelector(".view").style.aspectRatio = img.naturalWidth + " / " + img.naturalHeight;
    el.dataset.frames = String(Number(el.dataset.frames || 0) + 1);
    placeTags(el);
    next(el);
  };
  img.onerror = () => { img.hidden = true; next(el, 1000); };
}
function next(el, wait) {
  const rate = Math.min(10, Math.max(0.5, Number(el.dataset.rate || 1)));
  const since = Date.now() - Number(el.dataset.asked || 0);
  setTimeout(() => ask(el), wait !== undefined ? wait : Math.max(0, 1000 / rate - since));
}
function ask(el) {
  if (!el.isConnected) return;
  if (document.body.dataset.view === "history") { next(el, 1000); return; }
  if (el.dataset.hasFrame !== "true") { next(el, 1000); return; }
  el.dataset.asked = String(Date.now());
  el.querySelector("img").src =
    here("api/cameras/" + encodeURIComponent(el.dataset.camera) + "/latest.jpg?t=" + Date.now());
}

function tile(name) {
  if (tiles.has(name)) return tiles.get(name);
  const el = document.createElement("section");
  el.className = "camera";
  el.dataset.camera = name;
  el.innerHTML = '<div class="view"><img alt="" hidden><svg viewBox="0 0 100 100" ' +
    'preserveAspectRatio="none"></svg><div class="tags"></div>' +
    '<div class="placeholder">no picture yet</div></div>' +
    '<div class="info"><h2><span class="name"></span><span class="badge"></span></h2>' +
    '<span class="label">state</span><span data-k="state"></span>' +
    '<span class="label">persons</span><span data-k="persons"></span>' +
    '<span class="label">tracks</span><span data-k="tracks"></span>' +
    '<span class="label">rate</span><span data-k="fps"></span>' +
    '<span class="label">CPU</span><span data-k="capture"></span>' +
    '<span class="label">frames</span><span data-k="frames"></span>' +
    '<span class="label">gating</span><span data-k="gating"></span>' +
    '<span class="label">regions</span><span data-k="regions"></span>' +
    '<span class="label">pictures</span><span data-k="pictures"></span>' +
    '<span class="label">zones</span><span data-k="zones"></span>' +
    '<span class="label">lines</span><span data-k="lines"></span>' +
    '<span class="label">latency</span><span data-k="latency"></span>' +
    '<span class="label">last person</span><span data-k="last"></span></div>';
  el.querySelector("h2 .name").textContent = name;
  el.querySelector("img").alt = name + " live";
  el.addEventListener("click", () => el.classList.toggle("big"));
  new ResizeObserver(() => placeTags(el)).observe(el.querySelector(".view"));
  document.getElementById("cameras").appendChild(el);
  tiles.set(name, el);
  live(el);
  ask(el);
  return el;
}

function set(el, key, text) { el.querySelector('[data-k="' + key + '"]').textContent = text; }

// Zones and masks over the picture, in the frame's 0..1 coordinates.
function drawAreas(el, c) {
  const svg = el.querySelector("svg");
  svg.replaceChildren();
  const tags = el.querySelector(".tags");
  tags.replaceChildren();
  const poly = (points, cls, name) => {
    const p = document.createElementNS(SVG, "polygon");
    p.setAttribute("points", points.map(([x, y]) => (100 * x) + "," + (100 * y)).join(" "));
    p.setAttribute("class", cls);
    if (name) p.dataset.zone = name;
    svg.appendChild(p);
    if (name) tags.appendChild(tag("zone", name, {at: points[0]}));
  };
  for (const m of c.masks) poly(m, "mask", null);
  if (document.getElementById("show-regions").checked && c.frame_size.width > 0) {
    for (const r of c.regions.last) {
      if (r.kind === "whole") continue;
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", 100 * r.x / c.frame_size.width);
      rect.setAttribute("y", 100 * r.y / c.frame_size.height);
      rect.setAttribute("width", 100 * r.width / c.frame_size.width);
      rect.setAttribute("height", 100 * r.height / c.frame_size.height);
      rect.setAttribute("class", "region " + r.kind);
      svg.appendChild(rect);
    }
  }
  for (const z of c.zones) poly(z.polygon, "zone" + (z.present ? " present" : ""), z.name);
  // Counting lines, in fractions of the frame as zones.
  for (const l of c.lines) {
    const pts = l.points.map(([x, y]) => [100 * x, 100 * y]);
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", pts.map(([x, y]) => x + "," + y).join(" "));
    line.setAttribute("class", "line");
    line.dataset.line = l.name;
    svg.appendChild(line);
    // Which way is `in`: an arrow from the middle of the first segment to its right-hand side
    // as seen on the picture (a line drawn left to right: `in` is walking down).
    const [[x1, y1], [x2, y2]] = pts;
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const [tx, ty] = [(x2 - x1) / len, (y2 - y1) / len];
    const [nx, ny] = [-ty, tx];
    const [mx, my] = [(x1 + x2) / 2, (y1 + y2) / 2];
    const [ax, ay] = [mx + 6 * nx, my + 6 * ny];
    const arrow = document.createElementNS(SVG, "polyline");
    arrow.setAttribute("points", [[mx, my], [ax, ay], [ax - 2 * nx + 1.5 * tx, ay - 2 * ny + 1.5 * ty],
                                  [ax, ay], [ax - 2 * nx - 1.5 * tx, ay - 2 * ny - 1.5 * ty]]
                                     .map(([x, y]) => x + "," + y).join(" "));
    arrow.setAttribute("class", "line-in");
    arrow.dataset.direction = l.names.in;
    svg.appendChild(arrow);
    // The labels beside the first segment's middle: the name and counts on the `out` side,
    // the `in` direction's name past the arrow's tip.
    const segment = l.points.slice(0, 2);
    const counts = tag("line", l.name + " " + l.counts.in + " " + l.names.in + " / " +
        l.counts.out + " " + l.names.out, {segment, side: -1, gap: 4});
    counts.dataset.lineLabel = l.name;
    const direction = tag("line", l.names.in, {segment, side: 1, gap: 0, at: [ax / 100, ay / 100]});
    direction.dataset.direction = l.names.in;
    tags.append(counts, direction);
  }
  placeTags(el);
}

// A label over the picture: `where.at` a point (0..1 of the frame) it starts at, or
// `where.segment` a line's segment it sits beside, on its `side` (1: the right-hand side as
// seen on the picture, -1 the left), `gap` pixels away (from `where.at` when given, else from
// the segment's middle).
function tag(kind, text, where) {
  const t = document.createElement("span");
  t.className = "tag " + kind;
  t.textContent = text;
  t.where = where;
  return t;
}

// Places the labels in pixels of the picture as shown now, each kept inside it (2 px from its
// edges; a label wider than the picture wraps) and clear of the ones placed before it: called
// when they change, when the picture's size changes and when a picture arrives.
function placeTags(el) {
  const view = el.querySelector(".view");
  const [W, H] = [view.clientWidth, view.clientHeight];
  if (!W || !H) return;
  const placed = [];
  for (const t of el.querySelectorAll(".tags .tag")) {
    const w = t.offsetWidth;
    const h = t.offsetHeight;
    const where = t.where;
    let left;
    let top;
    if (where.segment) {
      const [[x1, y1], [x2, y2]] = where.segment.map(([x, y]) => [x * W, y * H]);
      const len = Math.hypot(x2 - x1, y2 - y1) || 1;
      const [nx, ny] = [-(y2 - y1) / len * where.side, (x2 - x1) / len * where.side];
      const [px, py] = where.at ? [where.at[0] * W, where.at[1] * H] : [(x1 + x2) / 2, (y1 + y2) / 2];
      // The label's centre, as far from the line as half its extent across it and the gap.
      const away = (Math.abs(nx) * w + Math.abs(ny) * h) / 2 + where.gap;
      left = px + nx * away - w / 2;
      top = py + ny * away - h / 2;
    } else {
      left = where.at[0] * W + 4;
      top = where.at[1] * H + 4;
    }
    left = Math.max(2, Math.min(W - w - 2, left));
    top = Math.max(2, Math.min(H - h - 2, top));
    // Clear of the labels placed before it: moved below one it would overlap (above it when
    // there is no room below).
    for (let tries = 0; tries < placed.length; ++tries) {
      const hit = placed.find(r => left < r.right && r.left < left + w && top < r.bottom &&
          r.top < top + h);
      if (!hit) break;
      top = hit.bottom + 2 + h <= H - 2 ? hit.bottom + 2 : Math.max(2, hit.top - 2 - h);
    }
    placed.push({left, top, right: left + w, bottom: top + h});
    t.style.left = left + "px";
    t.style.top = top + "px";
  }
}

function gating(m) {
  switch (m.state) {
    case "off": return "off: detects at the full detect_fps";
    case "motion": return "motion: full rate";
    case "person": return "person present: full rate" + (m.still_detect_interval_s > 0 ?
        " (one detection every " + m.still_detect_interval_s + " s while they stand still)" : "");
    case "idle": return "idle, nothing moves: one detection every " + m.idle_detect_interval_s + " s";
  }
  return m.state;
}

// Where the detector looks: the whole picture, or regions (and how many inferences so far).
function regions(c) {
  const r = c.regions;
  if (!r.active) return r.mode === "off" ? "off: the whole picture" :
      "the whole picture (" + r.mode + ": the picture is under twice the model's input)";
  const n = r.inferences;
  const runs = n.motion + n.track + n.whole + n.edge;
  const kinds = r.last.map(x => x.kind).join(", ");
  return "on: last detection " + (kinds || "-") + "; " +
      (c.frames.detected ? (runs / c.frames.detected).toFixed(2) : "-") + " inferences a detection";
}

// The camera's frame counts as /api/status gives them, those above zero, each by its name there
// (a count the camera adds shows here with no change to the page; decode warnings by kind).
function frames(c) {
  const said = (key) => key.replaceAll("_", " ");
  const parts = [];
  for (const [key, value] of Object.entries(c.frames)) {
    if (typeof value !== "object") {
      if (value > 0) parts.push(said(key) + " " + value);
      continue;
    }
    const kinds = Object.entries(value).filter(([, n]) => n > 0);
    if (!kinds.length) continue;
    parts.push(said(key) + " (" + kinds.map(([k, n]) => said(k) + " " + n).join(", ") + ")");
  }
  return parts.join(", ") || "-";
}

// Where the picture comes from: the detected frames, or the picture stream (picture_source).
function pictures(c) {
  const p = c.picture_stream;
  if (p === null) return "the detected frames";
  if (!p.up) return "picture stream " + p.state + (p.last_error ? " (" + p.last_error + ")" : "") +
      ": showing the detected frames";
  if (p.refused) return "picture stream not shown: " + p.refused;
  return p.width + "x" + p.height + " picture stream, " + p.decoding + " decoded";
}

function showCamera(c) {
  const el = tile(c.name);
  el.dataset.rate = String(c.detect_fps);
  el.dataset.hasFrame = String(c.has_frame);
  el.classList.toggle("present", c.present);
  el.classList.toggle("down", !c.up);
  el.querySelector("h2 .badge").textContent = !c.up ? "camera down" : c.present ?
      "person present" : "";
  set(el, "state", c.state + (c.last_error ? " (" + c.last_error + ")" : ""));
  if (!c.has_frame) {
    el.querySelector(".placeholder").textContent =
      c.up ? "no picture yet" : "camera down" + (c.last_error ? ": " + c.last_error : "");
  }
  set(el, "persons", !c.present ? "none" : c.persons > 0 ? String(c.persons) :
      "present (last seen " + (c.last_person ? ago(c.last_person) : "-") + ")");
  set(el, "tracks", c.tracks === null ? "off" : c.tracks.length === 0 ? "-" :
      c.tracks.map(t => "#" + t.id + (t.stationary ? " still" : "") +
                        (t.zones.length ? " in " + t.zones.join(", ") : "")).join("; "));
  set(el, "fps", c.fps_captured.toFixed(1) + " captured, " + c.fps_detected.toFixed(1) +
      " detected of " + c.detect_fps + " asked");
  set(el, "capture", "capture " + (100 * c.capture_cpu_share).toFixed(0) + "% of a core (" +
      c.frames.decoded + " of " + c.frames.captured + " frames decoded)");
  set(el, "frames", frames(c));
  set(el, "gating", gating(c.motion));
  set(el, "regions", regions(c));
  set(el, "pictures", pictures(c));
  set(el, "zones", c.zones.length ? c.zones.map(z => z.name + (z.present ? " (" + z.persons +
      ")" : "")).join(", ") : "-");
  set(el, "lines", c.lines.length ? c.lines.map(l => l.name + ": " + l.counts.in + " " +
      l.names.in + ", " + l.counts.out + " " + l.names.out).join("; ") : "-");
  set(el, "latency", c.latency_ms.samples ?
      "p50 " + c.latency_ms.p50.toFixed(0) + " ms, p99 " + c.latency_ms.p99.toFixed(0) + " ms" :
      "-");
  set(el, "last", c.last_person ? localTime(c.last_person) + " (" + ago(c.last_person) + ")" : "-");
  drawAreas(el, c);
}

function showEvents(events) {
  const list = document.getElementById("events");
  list.replaceChildren();
  if (!events.length) {
    list.innerHTML = '<li class="none">none yet</li>';
    return;
  }
  for (const e of events) {
    const li = document.createElement("li");
    li.dataset.event = e.id;
    const shot = e.snapshot ? document.createElement("a") : document.createElement("span");
    if (e.snapshot) {
      shot.href = here(e.snapshot);
      const img = document.createElement("img");
      img.src = here(e.snapshot);
      img.alt = e.camera + " snapshot";
      shot.appendChild(img);
    }
    const text = document.createElement("span");
    text.textContent = e.camera + (e.zone ? " / " + e.zone : "") + ": " + when(e.start, true) +
      (e.end ? " to " + when(e.end, true) : " (going on)") + ", up to " + e.max_count +
      " person(s), best score " + e.max_score.toFixed(2);
    li.append(shot, text);
    list.appendChild(li);
  }
}

// A path of the page's own (relative, so that the page works behind a proxy's prefix) as a URL
// without the login a user may have typed into the address ("https://user:pass@host/"): a
// request whose URL carries credentials is refused by the browser, and the login is already
// kept for the origin.
function here(path) {
  return new URL(path, location.origin + location.pathname).href;
}

async function json(path) {
  const response = await fetch(here(path), {cache: "no-store"});
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return response.json();
}

async function refresh() {
  try {
    const s = await json("api/status");
    document.getElementById("node").textContent = s.node;
    document.getElementById("version").textContent = s.version;
    document.getElementById("backend").textContent = s.backend.name;
    document.getElementById("device").textContent = s.backend.device;
    document.getElementById("mqtt").textContent =
      s.mqtt ? (s.mqtt.connected ? "connected" : "disconnected") : "off";
    const seen = new Set();
    for (const c of s.cameras) {
      seen.add(c.name);
      showCamera(c);
    }
    for (const [name, el] of tiles) {
      if (!seen.has(name)) { el.remove(); tiles.delete(name); }
    }
    // The other views of the page (the history's camera and zone filters) take the status too.
    document.dispatchEvent(new CustomEvent("vigil-status", {detail: s}));
    if (document.body.dataset.view !== "history") showEvents(await json("api/events"));
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    // Whether the page fits its window (no sideways scrolling), for the tests at phone width.
    document.body.dataset.fits =
      String(document.documentElement.scrollWidth <= window.innerWidth);
  } catch (e) {
    document.getElementById("error").textContent = "cannot reach Vigil: " + e.message;
  }
}
refresh();
setInterval(refresh, 2000);
document.getElementById("show-regions").checked = new URLSearchParams(location.search).has("regions");
document.getElementById("show-regions").addEventListener("change", refresh);
</script>
)html";

inline constexpr std::string_view kStatusPageEnd = "</body>\n</html>\n";

}  // namespace vigil
