#!/usr/bin/env node
// A P07 scheduler in JavaScript that speaks schedcheck-wire/1 on stdin/stdout.
//
// The same rules as docs/rules.md (and examples/wire/scheduler.py), to show that the
// suite checks a scheduler in any language (docs/wire-protocol.md). Plant a known
// bug with `--bug victim_first` (preempt the oldest running sequence, not the
// latest) or SCHEDCHECK_BUG=victim_first, to see a counterexample.
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
    this.output = [];
    this.numComputed = 0; // tokens whose KV is computed
    this.numBlocks = 0; // KV blocks held
    this.status = "WAITING";
  }

  get numTokens() {
    return this.promptLen + this.output.length;
  }
}

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
    this.blocksUsed = 0;
    this.numPreemptions = 0;
    this.batch = []; // [seq, n] pairs of the last schedule()
  }

  add(seqId, promptLen, maxTokens) {
    const seq = new Seq(seqId, promptLen, maxTokens);
    this.seqs.set(seqId, seq);
    this.waiting.push(seq);
  }

  tryGrow(seq, n) {
    const need = Math.ceil((seq.numComputed + n) / this.blockSize) - seq.numBlocks;
    if (need <= 0) return true;
    if (this.blocksUsed + need > this.numBlocks) return false;
    this.blocksUsed += need;
    seq.numBlocks += need;
    return true;
  }

  preemptVictim() {
    const victim = this.bug === "victim_first" ? this.running.shift() : this.running.pop();
    this.blocksUsed -= victim.numBlocks;
    victim.numBlocks = 0;
    victim.numComputed = 0;
    victim.status = "WAITING";
    this.waiting.unshift(victim);
    this.numPreemptions += 1;
    return victim;
  }

  schedule() {
    const batch = [];
    let budget = this.maxNumBatchedTokens;
    let i = 0;
    while (i < this.running.length && budget > 0) { // phase 1: running, in admission order
      const seq = this.running[i];
      const n = Math.min(seq.numTokens - seq.numComputed, budget);
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
    while (this.waiting.length > 0 && budget > 0 && this.running.length < this.maxNumSeqs) { // phase 2: FCFS
      const seq = this.waiting[0];
      const n = Math.min(seq.numTokens - seq.numComputed, budget);
      if (!this.tryGrow(seq, n)) break; // nobody behind the head may jump the queue
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
      if (token === this.eos || seq.output.length >= seq.maxTokens) {
        seq.status = "FINISHED";
        this.running.splice(this.running.indexOf(seq), 1);
        this.blocksUsed -= seq.numBlocks;
        seq.numBlocks = 0;
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
    for (const id of [...this.seqs.keys()].sort()) {
      const q = this.seqs.get(id);
      seqs[id] = {num_computed: q.numComputed, num_tokens: q.numTokens, num_blocks: q.numBlocks,
        status: q.status, output: q.output};
    }
    return {blocks_used: this.blocksUsed, num_preemptions: this.numPreemptions, waiting: ids(this.waiting),
      running: ids(this.running), finished: ids(this.finished), seqs};
  }
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
  process.stdout.write(JSON.stringify(message) + "\n");
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
    return JSON.parse(line);
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
