#!/usr/bin/env node
// A P07 scheduler in JavaScript that speaks schedcheck-wire/1 on stdin/stdout.
//
// The same rules as docs/rules.md (and examples/wire/scheduler.py), to show that the
// suite checks a scheduler in any language (docs/wire-protocol.md). Plant a known
// bug with `--bug victim_first` (preempt the oldest running sequence, not the
// latest) or SCHEDCHECK_BUG=victim_first, to see a counterexample.
//
// Every integer is a BigInt: the suite sends prompts and budgets past 2**53 and tokens
// past 2**64 (docs/wire-protocol.md, "Numbers"), which a JavaScript number rounds.
// parseExact and stringifyExact below read and write them exactly.
//
//   schedcheck check --wire "node examples/wire/scheduler.js"
//   schedcheck check --wire "node examples/wire/scheduler.js --bug victim_first"
"use strict";

const PROTOCOL = "schedcheck-wire/1";
const BUGS = ["victim_first"];

class Seq {
  constructor(seqId, promptLen, maxTokens) {
    this.seqId = seqId;
    this.promptLen = promptLen;
    this.maxTokens = maxTokens;
    this.output = []; // BigInt tokens
    this.numComputed = 0n; // tokens whose KV is computed
    this.numBlocks = 0n; // KV blocks held
    this.status = "WAITING";
  }

  get numTokens() {
    return this.promptLen + BigInt(this.output.length);
  }
}

const min = (a, b) => (a < b ? a : b);

class Scheduler {
  constructor(config, bug) {
    this.numBlocks = config.num_blocks;
    this.blockSize = config.block_size;
    this.maxNumSeqs = config.max_num_seqs;
    this.maxNumBatchedTokens = config.max_num_batched_tokens;
    this.eos = config.eos; // null: no end-of-sequence token
    this.bug = bug;
    this.seqs = new Map();
    this.waiting = []; // head first
    this.running = []; // admission order; the last is the next victim
    this.finished = [];
    this.blocksUsed = 0n;
    this.numPreemptions = 0n;
    this.batch = []; // [seq, n] pairs of the last schedule()
  }

  add(seqId, promptLen, maxTokens) {
    const seq = new Seq(seqId, promptLen, maxTokens);
    this.seqs.set(seqId, seq);
    this.waiting.push(seq);
  }

  tryGrow(seq, n) {
    const need = (seq.numComputed + n + this.blockSize - 1n) / this.blockSize - seq.numBlocks; // ceil, exactly
    if (need <= 0n) return true;
    if (this.blocksUsed + need > this.numBlocks) return false;
    this.blocksUsed += need;
    seq.numBlocks += need;
    return true;
  }

  preemptVictim() {
    const victim = this.bug === "victim_first" ? this.running.shift() : this.running.pop();
    this.blocksUsed -= victim.numBlocks;
    victim.numBlocks = 0n;
    victim.numComputed = 0n;
    victim.status = "WAITING";
    this.waiting.unshift(victim);
    this.numPreemptions += 1n;
    return victim;
  }

  schedule() {
    const batch = [];
    let budget = this.maxNumBatchedTokens;
    let i = 0;
    while (i < this.running.length && budget > 0n) { // phase 1: running, in admission order
      const seq = this.running[i];
      const n = min(seq.numTokens - seq.numComputed, budget);
      let skipped = false;
      while (!this.tryGrow(seq, n)) {
        if (this.preemptVictim() === seq) { // preempted itself: skip it, do not advance i
          skipped = true;
          break;
        }
      }
      if (!skipped) {
        batch.push([seq, n]);
        budget -= n;
        i += 1;
      }
    }
    while (this.waiting.length > 0 && budget > 0n && BigInt(this.running.length) < this.maxNumSeqs) { // phase 2
      const seq = this.waiting[0];
      const n = min(seq.numTokens - seq.numComputed, budget);
      if (!this.tryGrow(seq, n)) break; // nobody behind the head may jump the queue (FCFS)
      this.waiting.shift();
      seq.status = "RUNNING";
      this.running.push(seq);
      batch.push([seq, n]);
      budget -= n;
    }
    this.batch = batch;
    return batch.map(([seq, n]) => [seq.seqId, n]);
  }

  async update(sample) {
    const done = [];
    for (const [seq, n] of this.batch) {
      seq.numComputed += n;
      if (seq.numComputed < seq.numTokens) continue; // a chunked prefill that is not complete samples nothing
      const token = await sample(seq);
      seq.output.push(token);
      if (token === this.eos || BigInt(seq.output.length) >= seq.maxTokens) {
        seq.status = "FINISHED";
        this.running.splice(this.running.indexOf(seq), 1);
        this.blocksUsed -= seq.numBlocks;
        seq.numBlocks = 0n;
        this.finished.push(seq);
        done.push(seq.seqId);
      }
    }
    this.batch = [];
    return done;
  }

  snapshot() {
    const ids = (queue) => queue.map((q) => q.seqId);
    const seqs = {};
    for (const [id, q] of this.seqs) {
      seqs[id] = {num_computed: q.numComputed, num_tokens: q.numTokens, num_blocks: q.numBlocks,
        status: q.status, output: q.output};
    }
    return {blocks_used: this.blocksUsed, num_preemptions: this.numPreemptions, waiting: ids(this.waiting),
      running: ids(this.running), finished: ids(this.finished), seqs};
  }
}

// --- exact integers: JSON with every integer as a BigInt, both ways ----------------------------

// JSON.parse rounds an integer past 2**53 before any reviver sees it, so read the text itself.
const JSON_TOKEN = /\s*(?:([[\]{}:,])|("(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")|(-?(?:0|[1-9]\d*))((?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null))/y;

function parseExact(text) {
  let at = 0;
  const next = () => {
    JSON_TOKEN.lastIndex = at;
    const m = JSON_TOKEN.exec(text);
    if (m === null) throw new SyntaxError(`not JSON at offset ${at}: ${text.slice(at, at + 40)}`);
    at = JSON_TOKEN.lastIndex;
    return m;
  };
  const expect = (m, punct) => {
    if (m[1] !== punct) throw new SyntaxError(`expected '${punct}' before offset ${at}`);
  };
  const value = (m) => {
    if (m[2] !== undefined) return JSON.parse(m[2]); // a string: JSON.parse decodes its escapes
    if (m[3] !== undefined) return m[4] ? Number(m[3] + m[4]) : BigInt(m[3]); // an integer: exact
    if (m[5] !== undefined) return m[5] === "null" ? null : m[5] === "true";
    if (m[1] === "[") {
      const out = [];
      let t = next();
      for (let first = true; t[1] !== "]"; first = false) {
        if (!first) { expect(t, ","); t = next(); }
        out.push(value(t));
        t = next();
      }
      return out;
    }
    if (m[1] === "{") {
      const out = {};
      let t = next();
      for (let first = true; t[1] !== "}"; first = false) {
        if (!first) { expect(t, ","); t = next(); }
        if (t[2] === undefined) throw new SyntaxError(`expected a key before offset ${at}`);
        expect(next(), ":");
        Object.defineProperty(out, JSON.parse(t[2]), // defineProperty: a "__proto__" key stays a key
          {value: value(next()), enumerable: true, writable: true, configurable: true});
        t = next();
      }
      return out;
    }
    throw new SyntaxError(`unexpected '${m[0].trim()}' before offset ${at}`);
  };
  const result = value(next());
  if (text.slice(at).trim() !== "") throw new SyntaxError(`text after the value at offset ${at}`);
  return result;
}

function stringifyExact(v) {
  if (typeof v === "bigint") return v.toString();
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  let out = "";
  if (Array.isArray(v)) {
    for (const x of v) out += (out ? "," : "") + stringifyExact(x);
    return `[${out}]`;
  }
  for (const k of Object.keys(v)) {
    if (v[k] !== undefined) out += `${out ? "," : ""}${JSON.stringify(k)}:${stringifyExact(v[k])}`;
  }
  return `{${out}}`;
}

// --- the wire: one JSON object per line in each direction ---------------------------------------

class Lines {
  // Lines from stdin, handed out one at a time (null once stdin has closed).
  constructor(stream) {
    this.buffer = "";
    this.ready = [];
    this.waiters = [];
    this.closed = false;
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      this.buffer += chunk;
      let end;
      while ((end = this.buffer.indexOf("\n")) >= 0) {
        this.push(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 1);
      }
    });
    stream.on("end", () => {
      this.closed = true;
      while (this.waiters.length > 0) this.waiters.shift()(null);
    });
  }

  push(line) {
    if (this.waiters.length > 0) this.waiters.shift()(line);
    else this.ready.push(line);
  }

  next() {
    if (this.ready.length > 0) return Promise.resolve(this.ready.shift());
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

function send(message) {
  process.stdout.write(stringifyExact(message) + "\n");
}

async function main() {
  const flag = process.argv.indexOf("--bug");
  const bug = flag >= 0 ? process.argv[flag + 1] : process.env.SCHEDCHECK_BUG || null;
  if (bug !== null && !BUGS.includes(bug)) {
    process.stderr.write(`unknown bug ${JSON.stringify(bug)}; known: ${BUGS.join(", ")}\n`);
    process.exit(2);
  }
  const lines = new Lines(process.stdin);
  const instances = new Map();

  async function receive() {
    const line = await lines.next();
    if (line === null) process.exit(0); // the suite closed our stdin: done
    return parseExact(line);
  }

  async function sample(seq) { // the model runs on the suite's side
    send({sample: {seq_id: seq.seqId, output: seq.output}});
    return (await receive()).token;
  }

  async function handle(message) {
    const op = message.op;
    if (op === "hello") return {ok: true, protocol: PROTOCOL, name: "examples/wire/scheduler.js", snapshot: true};
    if (op === "new") {
      instances.set(message.instance, new Scheduler(message.config, bug));
      return {ok: true};
    }
    if (op === "close") {
      instances.delete(message.instance);
      return {ok: true};
    }
    const sched = instances.get(message.instance);
    if (sched === undefined) throw new Error(`no instance ${message.instance}`);
    switch (op) {
      case "add":
        sched.add(message.seq_id, message.prompt_len, message.max_tokens);
        return {ok: true};
      case "schedule":
        return {batch: sched.schedule()};
      case "update":
        return {finished: await sched.update(sample)};
      case "outputs":
        return {outputs: Object.fromEntries([...sched.seqs].map(([id, q]) => [id, q.output]))};
      case "snapshot":
        return {snapshot: sched.snapshot()};
      default:
        throw new Error(`unknown op ${JSON.stringify(op)}`);
    }
  }

  for (;;) {
    const message = await receive();
    let reply;
    try {
      reply = await handle(message);
    } catch (e) { // the suite records it as the scheduler raising
      reply = {error: `${e.name}: ${e.message}`};
    }
    send(reply);
  }
}

main();
