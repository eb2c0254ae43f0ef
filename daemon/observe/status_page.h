#pragma once

#include <string_view>

namespace vigil {

// GET / : one self-contained page (no external assets: the box may have no internet) that
// polls /api/status every 2 s and shows each camera's latest annotated frame, state, frame
// rates, persons, tracked persons (ids, stationary, zones; the frame draws their boxes) and
// latency.
inline constexpr std::string_view kStatusPage = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
  header { padding: 10px 16px; background: #222; display: flex; gap: 24px; flex-wrap: wrap; }
  header b { color: #fff; }
  #cameras { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr));
             gap: 12px; padding: 12px; }
  .camera { background: #1c1c1c; border-radius: 6px; overflow: hidden; border: 2px solid #333; }
  .camera.present { border-color: #e0a000; }
  .camera.down { border-color: #a02020; }
  .camera img { width: 100%; display: block; background: #000; aspect-ratio: 4 / 3;
                object-fit: contain; }
  .camera .info { padding: 8px 10px; display: grid; grid-template-columns: auto 1fr;
                  gap: 2px 12px; }
  .camera h2 { font-size: 16px; margin: 0; grid-column: 1 / 3; }
  .label { color: #999; }
  #error { color: #f66; padding: 0 16px; }
</style>
</head>
<body>
<header>
  <span><b>Vigil</b> <span id="version"></span></span>
  <span>backend <b id="backend">?</b> <span id="device" class="label"></span></span>
  <span>MQTT <b id="mqtt">?</b></span>
  <span class="label" id="updated"></span>
</header>
<div id="error"></div>
<main id="cameras"></main>
<script>
"use strict";
const tiles = new Map();

function tile(name) {
  if (tiles.has(name)) return tiles.get(name);
  const el = document.createElement("section");
  el.className = "camera";
  el.dataset.camera = name;
  el.innerHTML = '<img alt=""><div class="info"><h2></h2>' +
    '<span class="label">state</span><span data-k="state"></span>' +
    '<span class="label">persons</span><span data-k="persons"></span>' +
    '<span class="label">tracks</span><span data-k="tracks"></span>' +
    '<span class="label">fps</span><span data-k="fps"></span>' +
    '<span class="label">latency</span><span data-k="latency"></span>' +
    '<span class="label">last person</span><span data-k="last"></span></div>';
  el.querySelector("h2").textContent = name;
  el.querySelector("img").alt = name + " latest frame";
  document.getElementById("cameras").appendChild(el);
  tiles.set(name, el);
  return el;
}

function set(el, key, text) { el.querySelector('[data-k="' + key + '"]').textContent = text; }

async function refresh() {
  try {
    const response = await fetch("api/status", {cache: "no-store"});
    if (!response.ok) throw new Error("HTTP " + response.status);
    const s = await response.json();
    document.getElementById("version").textContent = s.version;
    document.getElementById("backend").textContent = s.backend.name;
    document.getElementById("device").textContent = s.backend.device;
    document.getElementById("mqtt").textContent =
      s.mqtt ? (s.mqtt.connected ? "connected" : "disconnected") : "off";
    const seen = new Set();
    for (const c of s.cameras) {
      seen.add(c.name);
      const el = tile(c.name);
      el.classList.toggle("present", c.present);
      el.classList.toggle("down", !c.up);
      set(el, "state", c.state + (c.last_error ? " (" + c.last_error + ")" : ""));
      set(el, "persons", c.present ? String(c.persons) : "none");
      set(el, "tracks", c.tracks === null ? "off" : c.tracks.length === 0 ? "-" :
          c.tracks.map(t => "#" + t.id + (t.stationary ? " still" : "") +
                            (t.zones.length ? " in " + t.zones.join(", ") : "")).join("; "));
      set(el, "fps", c.fps_captured.toFixed(1) + " captured, " + c.fps_detected.toFixed(1) +
          " detected");
      set(el, "latency", c.latency_ms.samples ?
          "p50 " + c.latency_ms.p50.toFixed(0) + " ms, p99 " + c.latency_ms.p99.toFixed(0) + " ms" :
          "-");
      set(el, "last", c.last_person || "-");
      if (c.has_frame) el.querySelector("img").src =
          "api/cameras/" + encodeURIComponent(c.name) + "/latest.jpg?t=" + Date.now();
    }
    for (const [name, el] of tiles) {
      if (!seen.has(name)) { el.remove(); tiles.delete(name); }
    }
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent =
      "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("error").textContent = "cannot reach Vigil: " + e.message;
  }
}
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
)html";

}  // namespace vigil
