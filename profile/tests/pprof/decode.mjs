// Decodes a pprof file (gzipped or not) with pprof-format, a decoder instr shares no code with, checks
// the rules pprof readers rely on, and prints what the Rust test compares with the views it encoded:
//   node decode.mjs FILE [--stacks]
// {"sample_types":[{"type","unit","total"}], "default_sample_type", "period_type", "period",
//  "samples", "locations", "functions", "stacks": [{"root;...;leaf": "value"} per sample type]}
// Numbers that can exceed 2^53 (values, totals) are printed as decimal strings: summed as BigInt, exact.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

const [file, ...flags] = process.argv.slice(2);
const withStacks = flags.includes('--stacks');
let bytes = readFileSync(file);
if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
const p = Profile.decode(bytes);

const fail = (msg) => {
  console.error(`decode.mjs: ${file}: ${msg}`);
  process.exit(1);
};
const strings = p.stringTable.strings;
if (strings[0] !== '') fail('string_table[0] is not ""');
const str = (i) => {
  const s = strings[Number(i)];
  if (s === undefined) fail(`string index ${i} out of the table (${strings.length})`);
  return s;
};

// Ids are nonzero and unique; every reference resolves (what pprof's own CheckValid asks).
const byId = (items, what) => {
  const m = new Map();
  for (const x of items) {
    const id = BigInt(x.id);
    if (id === 0n) fail(`${what} with id 0`);
    if (m.has(id)) fail(`two ${what}s with id ${id}`);
    m.set(id, x);
  }
  return m;
};
const functions = byId(p.function, 'function');
const locations = byId(p.location, 'location');
const frameName = new Map();
for (const [id, loc] of locations) {
  if (loc.line.length !== 1) fail(`location ${id} has ${loc.line.length} lines, expected 1`);
  const f = functions.get(BigInt(loc.line[0].functionId));
  if (!f) fail(`location ${id} names function ${loc.line[0].functionId}, which is not there`);
  frameName.set(id, str(f.name));
}

const types = p.sampleType.map((t) => ({ type: str(t.type), unit: str(t.unit), total: 0n }));
const stacks = types.map(() => new Map());
for (const [n, s] of p.sample.entries()) {
  if (s.value.length !== types.length) {
    fail(`sample ${n} has ${s.value.length} values for ${types.length} sample types`);
  }
  // location_id is leaf first; the test's stacks are written root first.
  const names = s.locationId.map((id) => {
    const name = frameName.get(BigInt(id));
    if (name === undefined) fail(`sample ${n} names location ${id}, which is not there`);
    return name;
  });
  const key = names.reverse().join(';');
  s.value.forEach((v, t) => {
    v = BigInt(v);
    if (v < 0n) fail(`sample ${n} has a negative value`);
    types[t].total += v;
    if (withStacks && v !== 0n) stacks[t].set(key, (stacks[t].get(key) ?? 0n) + v);
  });
}

const out = {
  sample_types: types.map((t) => ({ type: t.type, unit: t.unit, total: t.total.toString() })),
  default_sample_type: str(p.defaultSampleType),
  period_type: p.periodType ? { type: str(p.periodType.type), unit: str(p.periodType.unit) } : null,
  period: BigInt(p.period).toString(),
  samples: p.sample.length,
  locations: p.location.length,
  functions: p.function.length,
};
if (withStacks) {
  out.stacks = stacks.map((m) => Object.fromEntries([...m].map(([k, v]) => [k, v.toString()])));
}
console.log(JSON.stringify(out));
