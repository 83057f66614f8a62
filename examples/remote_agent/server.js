#!/usr/bin/env node
// A remote MirrorCraft agent in Node.js, without dependencies: copy it and change choose().
//
// It speaks the remote agent protocol (docs/remote_agent.md): the runner POSTs JSON to /reset
// when an episode starts, to /act for every action, and to /close at the end; /act is answered
// with one action. The policy is the greedy one of examples/my_agent.
//
//   node examples/remote_agent/server.js --port 8766
//   node examples/remote_agent/server.js --port 8766 -- mirrorcraft run SPEC --agent {url}
//
// After "--" the command runs with {url} replaced by the server's URL; the server stops when
// it ends, and exits with its status.
"use strict";

const http = require("http");
const { spawn } = require("child_process");

const PROTOCOL = "mirrorcraft-remote-agent/1";
const EXPLORE = ["iron_ore", "coal_ore"];

// A small seeded generator (mulberry32), one per episode, seeded with the episode's seed.
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const skill = (name, args) => ({ skill: name, args });
const count = (inv, suffix) =>
  Object.entries(inv).reduce((n, [item, k]) => (item.endsWith(suffix) ? n + k : n), 0);

// The greedy policy: the first rule that applies gives the action.
function choose(obs, random) {
  const inv = obs.inventory;
  const near = new Set(obs.nearby_blocks.map((b) => b.block));
  const table = obs.facilities.some((f) => f.block === "crafting_table");
  const items = Object.keys(inv).sort();
  const log = items.find((i) => i.endsWith("_log"));
  const plank = items.find((i) => i.endsWith("_planks"));
  const sticks = inv.stick || 0;
  const stone = inv.cobblestone || 0;
  const pickaxe = count(inv, "_pickaxe") > 0;
  const row3 = (m) => [[m, m, m], [null, "stick", null], [null, "stick", null]];
  if (obs.nearby_drops.length) return skill("collect", { item: obs.nearby_drops[0].item });
  if (!pickaxe && count(inv, "_log") + Math.floor(count(inv, "_planks") / 4) < 3 && !table) {
    return [...near].some((b) => b.endsWith("_log"))
      ? skill("mine", { block: "log" })
      : skill("explore", { target: "log" });
  }
  if (log && count(inv, "_planks") < 4) return skill("craft_grid", { station: "inventory", grid: [[log]] });
  if (!table && !inv.crafting_table && plank && inv[plank] >= 4) {
    return skill("craft_grid", { station: "inventory", grid: [[plank, plank], [plank, plank]] });
  }
  if (!table && inv.crafting_table) return skill("place", { block: "crafting_table" });
  if (sticks < 2 && plank && inv[plank] >= 2) {
    return skill("craft_grid", { station: "inventory", grid: [[plank], [plank]] });
  }
  if (!pickaxe && table && plank && inv[plank] >= 3 && sticks >= 2) {
    return skill("craft_grid", { station: "crafting_table", grid: row3(plank) });
  }
  if (pickaxe && !inv.stone_pickaxe && stone >= 3 && sticks >= 2 && table) {
    return skill("craft_grid", { station: "crafting_table", grid: row3("cobblestone") });
  }
  if (pickaxe && stone < 3) return skill("mine", { block: "stone", count: 3 });
  const target = EXPLORE[Math.floor(random() * EXPLORE.length)];
  return near.has(target) ? skill("mine", { block: target }) : skill("explore", { target });
}

const episodes = new Map();
const routes = {
  "/reset": (msg) => {
    episodes.set(msg.episode, seeded(msg.seed));
    return { protocol: PROTOCOL, agent: { name: "example-node", version: "1" } };
  },
  "/act": (msg) => {
    const random = episodes.get(msg.episode) || seeded(0);
    const action = choose(msg.observation, random);
    return { action, thought: `greedy: ${action.skill}` };
  },
  "/close": (msg) => {
    episodes.delete(msg.episode);
    return {};
  },
};

function answer(res, status, doc) {
  const data = JSON.stringify(doc);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) });
  res.end(data);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const route = req.method === "POST" ? routes[req.url] : undefined;
    if (!route) return answer(res, 404, { error: `no route ${req.url}` });
    try {
      answer(res, 200, route(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
    } catch (err) {
      answer(res, 400, { error: `bad request: ${err.message}` });
    }
  });
});
server.keepAliveTimeout = 60000;

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const own = split >= 0 ? argv.slice(0, split) : argv;
const command = split >= 0 ? argv.slice(split + 1) : [];
const option = (name, fallback) => {
  const i = own.indexOf(name);
  return i >= 0 ? own[i + 1] : fallback;
};
const host = option("--host", "127.0.0.1");
const port = Number(option("--port", "8766"));

server.on("error", (err) => {
  // A port in use is one line, not a stack trace.
  console.error(
    `server.js: cannot listen on ${host}:${port}: ${err.code || err.message}` +
      " (is another server there? pass another --port, or 0 for any free one)",
  );
  process.exit(2);
});

server.listen(port, host, () => {
  const url = `http://${host}:${server.address().port}`;
  if (!command.length) {
    console.log(`remote agent listening on ${url}`);
    return;
  }
  const child = spawn(command[0], command.slice(1).map((a) => a.split("{url}").join(url)), {
    stdio: "inherit",
  });
  child.on("exit", (code, signal) => {
    server.close();
    process.exit(code === null ? 1 : code);
  });
  child.on("error", (err) => {
    console.error(`cannot run ${command[0]}: ${err.message}`);
    server.close();
    process.exit(127);
  });
});
