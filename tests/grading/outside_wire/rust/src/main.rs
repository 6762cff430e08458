//! A P07 scheduler speaking the schedcheck wire protocol (schedcheck-wire/1).
//! Standard library only: a small exact JSON reader/writer (integers as i128).

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufRead, BufWriter, Write};

// ---------------------------------------------------------------- JSON

#[derive(Debug, Clone)]
enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(String), // any number with a fraction or exponent: refused where an integer belongs
    /// A string, kept in canonical escaped form (see `canon`), quotes included.
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>), // keys in canonical escaped form
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        // `key` is a plain ASCII key; compare against its canonical form.
        let want = canon_ascii(key);
        match self {
            Json::Obj(items) => items.iter().find(|(k, _)| *k == want).map(|(_, v)| v),
            _ => None,
        }
    }
    fn as_int(&self) -> Option<i128> {
        match self {
            Json::Int(v) => Some(*v),
            _ => None,
        }
    }
}

fn canon_ascii(s: &str) -> String {
    let cps: Vec<u32> = s.chars().map(|c| c as u32).collect();
    canon(&cps)
}

/// Canonical JSON encoding of a string given as UTF-16-ish code points (lone
/// surrogates allowed): printable ASCII as itself, everything else escaped.
/// Two strings are equal exactly when their canonical encodings are equal.
fn canon(cps: &[u32]) -> String {
    let mut out = String::with_capacity(cps.len() + 2);
    out.push('"');
    for &c in cps {
        match c {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x20..=0x7e => out.push(c as u8 as char),
            0..=0xffff => out.push_str(&format!("\\u{:04x}", c)),
            _ => {
                let v = c - 0x10000;
                let hi = 0xd800 + (v >> 10);
                let lo = 0xdc00 + (v & 0x3ff);
                out.push_str(&format!("\\u{:04x}\\u{:04x}", hi, lo));
            }
        }
    }
    out.push('"');
    out
}

struct Parser<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.at < self.b.len() && matches!(self.b[self.at], b' ' | b'\t' | b'\r' | b'\n') {
            self.at += 1;
        }
    }
    fn err<T>(&self, msg: &str) -> Result<T, String> {
        Err(format!("bad JSON at offset {}: {}", self.at, msg))
    }
    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        if self.at >= self.b.len() {
            return self.err("unexpected end");
        }
        match self.b[self.at] {
            b'{' => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(Json::Obj(items));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return self.err("expected a key");
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return self.err("expected ':'");
                    }
                    self.at += 1;
                    let v = self.value()?;
                    items.push((k, v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Obj(items));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Json::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::Arr(items));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            b'"' => Ok(Json::Str(self.string()?)),
            b't' => self.lit("true", Json::Bool(true)),
            b'f' => self.lit("false", Json::Bool(false)),
            b'n' => self.lit("null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => self.err("unexpected character"),
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }
    fn lit(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.b[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(v)
        } else {
            self.err("bad literal")
        }
    }
    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let ds = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        if self.at == ds {
            return self.err("expected digits");
        }
        let int_end = self.at;
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.at += 1;
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.at += 1;
            }
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            float = true;
            self.at += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.at += 1;
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.at += 1;
            }
        }
        let text = std::str::from_utf8(&self.b[start..self.at]).unwrap().to_string();
        if float {
            return Ok(Json::Float(text));
        }
        let digits = std::str::from_utf8(&self.b[start..int_end]).unwrap();
        match digits.parse::<i128>() {
            Ok(v) => Ok(Json::Int(v)),
            Err(_) => self.err("integer out of the 128-bit range"),
        }
    }
    fn hex4(&mut self) -> Result<u32, String> {
        if self.at + 4 > self.b.len() {
            return self.err("short \\u escape");
        }
        let s = std::str::from_utf8(&self.b[self.at..self.at + 4]).map_err(|_| "bad \\u".to_string())?;
        let v = u32::from_str_radix(s, 16).map_err(|_| format!("bad \\u escape at {}", self.at))?;
        self.at += 4;
        Ok(v)
    }
    /// Reads a string and returns its canonical encoding.
    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // opening quote
        let mut cps: Vec<u32> = Vec::new();
        loop {
            let c = match self.peek() {
                None => return self.err("unterminated string"),
                Some(c) => c,
            };
            match c {
                b'"' => {
                    self.at += 1;
                    break;
                }
                b'\\' => {
                    self.at += 1;
                    let e = match self.peek() {
                        None => return self.err("bad escape"),
                        Some(e) => e,
                    };
                    self.at += 1;
                    match e {
                        b'"' => cps.push(0x22),
                        b'\\' => cps.push(0x5c),
                        b'/' => cps.push(0x2f),
                        b'b' => cps.push(8),
                        b'f' => cps.push(12),
                        b'n' => cps.push(10),
                        b'r' => cps.push(13),
                        b't' => cps.push(9),
                        b'u' => {
                            let u = self.hex4()?;
                            cps.push(u);
                        }
                        _ => return self.err("bad escape"),
                    }
                }
                _ if c < 0x80 => {
                    cps.push(c as u32);
                    self.at += 1;
                }
                _ => {
                    // raw UTF-8: decode one character
                    let len = if c >= 0xf0 { 4 } else if c >= 0xe0 { 3 } else { 2 };
                    let end = (self.at + len).min(self.b.len());
                    let s = std::str::from_utf8(&self.b[self.at..end]).map_err(|_| "bad UTF-8".to_string())?;
                    let ch = s.chars().next().unwrap();
                    cps.push(ch as u32);
                    self.at = end;
                }
            }
        }
        // Combine surrogate pairs into one code point so both spellings agree.
        let mut merged: Vec<u32> = Vec::with_capacity(cps.len());
        let mut i = 0;
        while i < cps.len() {
            let c = cps[i];
            if (0xd800..0xdc00).contains(&c) && i + 1 < cps.len() && (0xdc00..0xe000).contains(&cps[i + 1]) {
                merged.push(0x10000 + ((c - 0xd800) << 10) + (cps[i + 1] - 0xdc00));
                i += 2;
            } else {
                merged.push(c);
                i += 1;
            }
        }
        Ok(canon(&merged))
    }
}

fn parse(line: &str) -> Result<Json, String> {
    let mut p = Parser { b: line.as_bytes(), at: 0 };
    let v = p.value()?;
    p.ws();
    if p.at != p.b.len() {
        return p.err("text after the value");
    }
    Ok(v)
}

fn write_json(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::Float(t) => out.push_str(t),
        Json::Str(s) => out.push_str(s),
        Json::Arr(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, x);
            }
            out.push(']');
        }
        Json::Obj(items) => {
            out.push('{');
            for (i, (k, x)) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push(':');
                write_json(out, x);
            }
            out.push('}');
        }
    }
}

fn push_str_json(out: &mut String, plain: &str) {
    out.push_str(&canon_ascii(plain));
}

// ---------------------------------------------------------------- scheduler

#[derive(Clone, Copy, PartialEq)]
enum Status {
    Waiting,
    Running,
    Finished,
}

struct Seq {
    id: String, // canonical JSON string, quotes included
    prompt_len: i128,
    max_tokens: i128,
    output: Vec<i128>,
    /// The output's JSON text without brackets ("1,2,3"), kept in step with `output`.
    output_text: String,
    num_computed: i128,
    num_blocks: i128,
    status: Status,
}

static NO_TEXT_CACHE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Seq {
    /// The output as JSON text without brackets. `--no-text-cache` (a timing experiment)
    /// renders it from the numbers every time instead of using the cached text.
    fn output_json(&self) -> std::borrow::Cow<'_, str> {
        if NO_TEXT_CACHE.load(std::sync::atomic::Ordering::Relaxed) {
            let v: Vec<String> = self.output.iter().map(|t| t.to_string()).collect();
            std::borrow::Cow::Owned(v.join(","))
        } else {
            std::borrow::Cow::Borrowed(&self.output_text)
        }
    }
    fn num_tokens(&self) -> i128 {
        self.prompt_len + self.output.len() as i128
    }
}

struct Sched {
    num_blocks: i128,
    block_size: i128,
    max_num_seqs: i128,
    budget: i128,
    eos: Option<i128>,
    vllm_v1: bool,
    seqs: Vec<Seq>,
    by_id: HashMap<String, usize>,
    waiting: VecDeque<usize>,
    running: Vec<usize>,
    finished: Vec<usize>,
    blocks_used: i128,
    num_preemptions: i128,
    last_batch: Vec<(usize, i128)>,
}

fn ceil_div(a: i128, b: i128) -> i128 {
    if a <= 0 {
        0
    } else {
        (a + b - 1) / b
    }
}

impl Sched {
    fn blocks_for(&self, t: i128) -> i128 {
        ceil_div(t, self.block_size)
    }

    fn try_grow(&mut self, s: usize, t: i128) -> bool {
        let need = self.blocks_for(t) - self.seqs[s].num_blocks;
        if need <= 0 {
            return true;
        }
        if self.blocks_used + need <= self.num_blocks {
            self.blocks_used += need;
            self.seqs[s].num_blocks += need;
            true
        } else {
            false
        }
    }

    fn preempt_last(&mut self) -> usize {
        let v = self.running.pop().expect("preempt with empty running");
        let seq = &mut self.seqs[v];
        self.blocks_used -= seq.num_blocks;
        seq.num_blocks = 0;
        seq.num_computed = 0;
        seq.status = Status::Waiting;
        self.waiting.push_front(v);
        self.num_preemptions += 1;
        v
    }

    fn schedule(&mut self) -> Vec<(usize, i128)> {
        let mut budget = self.budget;
        let mut batch: Vec<(usize, i128)> = Vec::new();
        let mut preempted = false;
        // Phase 1: running.
        let mut i = 0;
        while i < self.running.len() && budget > 0 {
            let s = self.running[i];
            let gap = self.seqs[s].num_tokens() - self.seqs[s].num_computed;
            let n = gap.min(budget);
            loop {
                let t = self.seqs[s].num_computed + n;
                if self.try_grow(s, t) {
                    batch.push((s, n));
                    budget -= n;
                    i += 1;
                    break;
                }
                let v = self.preempt_last();
                preempted = true;
                if v == s {
                    break; // P1.skip_self
                }
            }
        }
        // Phase 2: waiting, strict FCFS.
        if !(self.vllm_v1 && preempted) {
            while !self.waiting.is_empty() && budget > 0 {
                if self.running.len() as i128 >= self.max_num_seqs {
                    break;
                }
                let s = self.waiting[0];
                let gap = self.seqs[s].num_tokens() - self.seqs[s].num_computed;
                let n = gap.min(budget);
                if self.vllm_v1 {
                    let whole = self.blocks_for(self.seqs[s].num_tokens());
                    if self.blocks_used + whole - self.seqs[s].num_blocks > self.num_blocks {
                        break;
                    }
                }
                let t = self.seqs[s].num_computed + n;
                if !self.try_grow(s, t) {
                    break;
                }
                self.waiting.pop_front();
                self.seqs[s].status = Status::Running;
                self.running.push(s);
                batch.push((s, n));
                budget -= n;
            }
        }
        self.last_batch = batch.clone();
        batch
    }
}

// ---------------------------------------------------------------- I/O loop

struct Io {
    input: io::StdinLock<'static>,
    out: BufWriter<io::StdoutLock<'static>>,
}

impl Io {
    fn read_line(&mut self) -> Option<String> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match self.input.read_until(b'\n', &mut buf) {
                Ok(0) => return None,
                Ok(_) => {
                    let s = String::from_utf8_lossy(&buf).into_owned();
                    if s.trim().is_empty() {
                        continue;
                    }
                    return Some(s);
                }
                Err(_) => return None,
            }
        }
    }
    fn send(&mut self, line: &str) {
        let _ = self.out.write_all(line.as_bytes());
        let _ = self.out.write_all(b"\n");
        if self.out.flush().is_err() {
            std::process::exit(0);
        }
    }
}

fn error_reply(msg: &str) -> String {
    let mut s = String::from("{\"error\":");
    push_str_json(&mut s, msg);
    s.push('}');
    s
}

fn int_field(msg: &Json, key: &str) -> Result<i128, String> {
    msg.get(key)
        .and_then(|v| v.as_int())
        .ok_or_else(|| format!("missing or non-integer field '{}'", key))
}

struct State {
    instances: HashMap<i128, Sched>,
    /// Policy from the command line (`--policy vllm-v1`): the wire protocol's `new` carries none.
    default_vllm_v1: bool,
}

enum Outcome {
    Reply(String),
    Exit,
}

fn handle(st: &mut State, io: &mut Io, msg: &Json) -> Result<Outcome, String> {
    let op = match msg.get("op") {
        Some(Json::Str(s)) => s.clone(),
        _ => return Err("message without an 'op'".into()),
    };
    let op = op.trim_matches('"').to_string();
    if op == "hello" {
        let proto = match msg.get("protocol") {
            Some(Json::Str(s)) => s.clone(),
            _ => return Err("hello without a protocol".into()),
        };
        if proto != canon_ascii("schedcheck-wire/1") {
            return Err(format!("unsupported protocol {}; this program speaks schedcheck-wire/1", proto));
        }
        return Ok(Outcome::Reply(format!(
            "{{\"ok\":true,\"protocol\":{},\"name\":\"rusty-p07 0.1\",\"snapshot\":true}}",
            proto
        )));
    }
    let inst = int_field(msg, "instance")?;
    match op.as_str() {
        "new" => {
            let cfg = msg.get("config").ok_or("new without config")?;
            let eos = match cfg.get("eos") {
                None | Some(Json::Null) => None,
                Some(Json::Int(v)) => Some(*v),
                _ => return Err("config.eos must be an integer or null".into()),
            };
            let vllm_v1 = match cfg.get("policy") {
                Some(Json::Str(p)) => *p == canon_ascii("vllm-v1"),
                _ => st.default_vllm_v1,
            };
            let s = Sched {
                num_blocks: int_field(cfg, "num_blocks")?,
                block_size: int_field(cfg, "block_size")?,
                max_num_seqs: int_field(cfg, "max_num_seqs")?,
                budget: int_field(cfg, "max_num_batched_tokens")?,
                eos,
                vllm_v1,
                seqs: Vec::new(),
                by_id: HashMap::new(),
                waiting: VecDeque::new(),
                running: Vec::new(),
                finished: Vec::new(),
                blocks_used: 0,
                num_preemptions: 0,
                last_batch: Vec::new(),
            };
            if s.block_size < 1 {
                return Err("block_size must be >= 1".into());
            }
            st.instances.insert(inst, s);
            Ok(Outcome::Reply("{\"ok\":true}".into()))
        }
        "close" => {
            st.instances.remove(&inst);
            Ok(Outcome::Reply("{\"ok\":true}".into()))
        }
        _ => {
            let s = st
                .instances
                .get_mut(&inst)
                .ok_or_else(|| format!("unknown instance {}", inst))?;
            match op.as_str() {
                "add" => {
                    let id = match msg.get("seq_id") {
                        Some(Json::Str(x)) => x.clone(),
                        _ => return Err("add without a string seq_id".into()),
                    };
                    if s.by_id.contains_key(&id) {
                        return Err(format!("duplicate seq_id {}", id));
                    }
                    let prompt_len = int_field(msg, "prompt_len")?;
                    let max_tokens = int_field(msg, "max_tokens")?;
                    let idx = s.seqs.len();
                    s.seqs.push(Seq {
                        id: id.clone(),
                        prompt_len,
                        max_tokens,
                        output: Vec::new(),
                        output_text: String::new(),
                        num_computed: 0,
                        num_blocks: 0,
                        status: Status::Waiting,
                    });
                    s.by_id.insert(id, idx);
                    s.waiting.push_back(idx);
                    Ok(Outcome::Reply("{\"ok\":true}".into()))
                }
                "schedule" => {
                    let batch = s.schedule();
                    let mut r = String::from("{\"batch\":[");
                    for (k, (idx, n)) in batch.iter().enumerate() {
                        if k > 0 {
                            r.push(',');
                        }
                        r.push('[');
                        r.push_str(&s.seqs[*idx].id);
                        r.push(',');
                        r.push_str(&n.to_string());
                        r.push(']');
                    }
                    r.push_str("]}");
                    Ok(Outcome::Reply(r))
                }
                "update" => {
                    let batch = std::mem::take(&mut s.last_batch);
                    let mut done: Vec<usize> = Vec::new();
                    for (idx, n) in batch {
                        s.seqs[idx].num_computed += n;
                        if s.seqs[idx].num_computed != s.seqs[idx].num_tokens() {
                            continue; // U.partial
                        }
                        // U.sample
                        let mut req = String::from("{\"sample\":{\"seq_id\":");
                        req.push_str(&s.seqs[idx].id);
                        req.push_str(",\"output\":[");
                        req.push_str(&s.seqs[idx].output_json());
                        req.push_str("]}}");
                        io.send(&req);
                        let line = match io.read_line() {
                            Some(l) => l,
                            None => return Ok(Outcome::Exit),
                        };
                        let tok = parse(line.trim_end())?;
                        let token = match tok.get("token") {
                            Some(Json::Int(v)) => *v,
                            _ => return Err(format!("expected a token line, got {}", line.trim_end())),
                        };
                        s.seqs[idx].output.push(token);
                        {
                            let ot = &mut s.seqs[idx].output_text;
                            if !ot.is_empty() {
                                ot.push(',');
                            }
                            ot.push_str(&token.to_string());
                        }
                        let seq = &s.seqs[idx];
                        if Some(token) == s.eos || seq.output.len() as i128 >= seq.max_tokens {
                            // U.finish
                            let nb = s.seqs[idx].num_blocks;
                            s.blocks_used -= nb;
                            s.seqs[idx].num_blocks = 0;
                            s.seqs[idx].status = Status::Finished;
                            if let Some(pos) = s.running.iter().position(|&x| x == idx) {
                                s.running.remove(pos);
                            }
                            s.finished.push(idx);
                            done.push(idx);
                        }
                    }
                    let mut r = String::from("{\"finished\":[");
                    for (k, idx) in done.iter().enumerate() {
                        if k > 0 {
                            r.push(',');
                        }
                        r.push_str(&s.seqs[*idx].id);
                    }
                    r.push_str("]}");
                    Ok(Outcome::Reply(r))
                }
                "snapshot" => {
                    let mut r = String::with_capacity(256);
                    r.push_str("{\"snapshot\":{\"blocks_used\":");
                    r.push_str(&s.blocks_used.to_string());
                    r.push_str(",\"num_preemptions\":");
                    r.push_str(&s.num_preemptions.to_string());
                    let queue = |r: &mut String, name: &str, ids: &mut dyn Iterator<Item = usize>| {
                        r.push_str(",\"");
                        r.push_str(name);
                        r.push_str("\":[");
                        let mut first = true;
                        for idx in ids {
                            if !first {
                                r.push(',');
                            }
                            first = false;
                            r.push_str(&s.seqs[idx].id);
                        }
                        r.push(']');
                    };
                    queue(&mut r, "waiting", &mut s.waiting.iter().copied());
                    queue(&mut r, "running", &mut s.running.iter().copied());
                    queue(&mut r, "finished", &mut s.finished.iter().copied());
                    r.push_str(",\"seqs\":{");
                    for (k, seq) in s.seqs.iter().enumerate() {
                        if k > 0 {
                            r.push(',');
                        }
                        r.push_str(&seq.id);
                        r.push_str(":{\"num_computed\":");
                        r.push_str(&seq.num_computed.to_string());
                        r.push_str(",\"num_tokens\":");
                        r.push_str(&seq.num_tokens().to_string());
                        r.push_str(",\"num_blocks\":");
                        r.push_str(&seq.num_blocks.to_string());
                        r.push_str(",\"status\":\"");
                        r.push_str(match seq.status {
                            Status::Waiting => "WAITING",
                            Status::Running => "RUNNING",
                            Status::Finished => "FINISHED",
                        });
                        r.push_str("\",\"output\":[");
                        r.push_str(&seq.output_json());
                        r.push_str("]}");
                    }
                    r.push_str("}}}");
                    Ok(Outcome::Reply(r))
                }
                "outputs" => {
                    let mut items = Vec::new();
                    for seq in &s.seqs {
                        items.push((
                            seq.id.clone(),
                            Json::Arr(seq.output.iter().map(|t| Json::Int(*t)).collect()),
                        ));
                    }
                    let mut r = String::from("{\"outputs\":");
                    write_json(&mut r, &Json::Obj(items));
                    r.push('}');
                    Ok(Outcome::Reply(r))
                }
                other => Err(format!("unknown op {}", other)),
            }
        }
    }
}

fn main() {
    let stdin: &'static io::Stdin = Box::leak(Box::new(io::stdin()));
    let stdout: &'static io::Stdout = Box::leak(Box::new(io::stdout()));
    let mut io = Io {
        input: stdin.lock(),
        out: BufWriter::with_capacity(1 << 16, stdout.lock()),
    };
    let args: Vec<String> = std::env::args().collect();
    let default_vllm_v1 = args.windows(2).any(|w| w[0] == "--policy" && w[1] == "vllm-v1")
        || args.iter().any(|a| a == "--policy=vllm-v1");
    if args.iter().any(|a| a == "--no-text-cache") {
        NO_TEXT_CACHE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let mut st = State { instances: HashMap::new(), default_vllm_v1 };
    while let Some(line) = io.read_line() {
        let reply = match parse(line.trim_end()) {
            Err(e) => error_reply(&e),
            Ok(msg) => match handle(&mut st, &mut io, &msg) {
                Ok(Outcome::Reply(r)) => r,
                Ok(Outcome::Exit) => return,
                Err(e) => {
                    eprintln!("error: {}", e);
                    error_reply(&e)
                }
            },
        };
        io.send(&reply);
    }
}
