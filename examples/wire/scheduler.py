#!/usr/bin/env python3
"""A P07 scheduler in plain Python that speaks schedcheck-wire/1 on stdin/stdout.

It imports nothing from schedcheck: it stands for a scheduler that lives in
another code base, checked from outside through the wire protocol
(docs/wire-protocol.md). The rules are docs/rules.md's; `--bug victim_first` preempts
the oldest running sequence instead of the latest, to show a counterexample.

    schedcheck check --wire "python3 examples/wire/scheduler.py"
"""

import argparse
import json
import sys
from collections import deque

PROTOCOL = "schedcheck-wire/1"


class Seq:
    __slots__ = ("seq_id", "prompt_len", "max_tokens", "output", "num_computed", "num_blocks", "status")

    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens = seq_id, prompt_len, max_tokens
        self.output = []
        self.num_computed = 0
        self.num_blocks = 0
        self.status = "WAITING"

    @property
    def num_tokens(self):
        return self.prompt_len + len(self.output)


class Scheduler:
    def __init__(self, config, bug):
        self.num_blocks = config["num_blocks"]
        self.block_size = config["block_size"]
        self.max_num_seqs = config["max_num_seqs"]
        self.max_num_batched_tokens = config["max_num_batched_tokens"]
        self.eos = config["eos"]
        self.bug = bug
        self.seqs = {}
        self.waiting, self.running, self.finished = deque(), [], []
        self.blocks_used = 0
        self.num_preemptions = 0
        self.batch = []

    def add(self, seq_id, prompt_len, max_tokens):
        self.seqs[seq_id] = seq = Seq(seq_id, prompt_len, max_tokens)
        self.waiting.append(seq)

    def try_grow(self, seq, n):
        need = -(-(seq.num_computed + n) // self.block_size) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True

    def preempt_victim(self):
        victim = self.running.pop(0 if self.bug == "victim_first" else -1)
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = victim.num_computed = 0
        victim.status = "WAITING"
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    def schedule(self):
        batch, budget, i = [], self.max_num_batched_tokens, 0
        while i < len(self.running) and budget > 0:  # phase 1: running, in admission order
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while not self.try_grow(seq, n):
                if self.preempt_victim() is seq:
                    break  # preempted itself: skip it, do not advance i
            else:
                batch.append((seq, n))
                budget -= n
                i += 1
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:  # phase 2: FCFS
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self.try_grow(seq, n):
                break  # nobody behind the head may jump the queue
            self.waiting.popleft()
            seq.status = "RUNNING"
            self.running.append(seq)
            batch.append((seq, n))
            budget -= n
        self.batch = batch
        return [[seq.seq_id, n] for seq, n in batch]

    def update(self, sample):
        done = []
        for seq, n in self.batch:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue  # a chunked prefill that is not complete samples nothing
            token = sample(seq)
            seq.output.append(token)
            if token == self.eos or len(seq.output) >= seq.max_tokens:
                seq.status = "FINISHED"
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq.seq_id)
        self.batch = []
        return done

    def snapshot(self):
        return {"blocks_used": self.blocks_used, "num_preemptions": self.num_preemptions,
                "waiting": [q.seq_id for q in self.waiting], "running": [q.seq_id for q in self.running],
                "finished": [q.seq_id for q in self.finished],
                "seqs": {k: {"num_computed": q.num_computed, "num_tokens": q.num_tokens, "num_blocks": q.num_blocks,
                             "status": q.status, "output": list(q.output)} for k, q in sorted(self.seqs.items())}}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)  # the suite closed our stdin: done
    return json.loads(line)


def sample(seq):
    """Ask the suite for the next token of `seq` (the model runs on the suite's side)."""
    send({"sample": {"seq_id": seq.seq_id, "output": seq.output}})
    return receive()["token"]


def handle(message, instances, bug):
    op = message["op"]
    if op == "hello":
        return {"ok": True, "protocol": PROTOCOL, "name": "examples/wire/scheduler.py", "snapshot": True}
    if op == "new":
        instances[message["instance"]] = Scheduler(message["config"], bug)
        return {"ok": True}
    if op == "close":
        del instances[message["instance"]]
        return {"ok": True}
    sched = instances[message["instance"]]
    if op == "add":
        sched.add(message["seq_id"], message["prompt_len"], message["max_tokens"])
        return {"ok": True}
    if op == "schedule":
        return {"batch": sched.schedule()}
    if op == "update":
        return {"finished": sched.update(sample)}
    if op == "outputs":
        return {"outputs": {k: q.output for k, q in sched.seqs.items()}}
    if op == "snapshot":
        return {"snapshot": sched.snapshot()}
    return {"error": f"unknown op {op!r}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bug", choices=["victim_first"], help="plant a known bug")
    bug = parser.parse_args().bug
    instances = {}
    while True:
        message = receive()
        try:
            reply = handle(message, instances, bug)
        except Exception as e:  # the suite records it as the scheduler raising
            reply = {"error": f"{type(e).__name__}: {e}"}
        send(reply)


if __name__ == "__main__":
    main()
