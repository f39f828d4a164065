// The HTML flame graph's script (profile/src/render/html.rs embeds it in every page, after the data).
// It draws on one <canvas>: a profile of 100,000 stacks has hundreds of thousands of frames, far too
// many DOM or SVG elements, while only the frames at least a pixel wide can be seen at all; narrower
// siblings are drawn as one "…" box so that their sum stays visible.
'use strict';
(function () {
  const data = JSON.parse(document.getElementById('instr-data').textContent);
  const names = data.names;
  const kinds = data.kinds;
  const ROW = 18; // px per frame row
  const MIN_W = 1; // frames narrower than this (css px) are merged with their narrow neighbours
  const MAX_ROWS = Math.floor(30000 / ROW); // browsers refuse canvases much taller than 32k px
  const KIND_LABEL = { j: 'JDK', a: 'application', c: 'allocated class' };

  const $ = (id) => document.getElementById(id);
  const canvas = $('flame');
  const ctx = canvas.getContext('2d');
  const tip = $('tip');

  // ---- numbers -------------------------------------------------------------------------------------
  function fmtInt(v) {
    // Grouped by hand rather than toLocaleString: the page reads the same in every locale, and the
    // browser test compares it with what Rust computed.
    return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function human(v, unit) {
    const scales = unit === 'nanoseconds' ? [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs']]
      : unit === 'bytes' ? [[1073741824, 'GiB'], [1048576, 'MiB'], [1024, 'KiB']] : [];
    for (const [s, u] of scales) if (v >= s) return (v / s).toFixed(2) + ' ' + u;
    return '';
  }
  function fmtValue(v, unit) {
    const h = human(v, unit);
    return fmtInt(v) + ' ' + unit + (h ? ' (' + h + ')' : '');
  }
  function pct(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(1) + '%' : '0.0%';
  }

  // ---- trees ---------------------------------------------------------------------------------------
  // A tree is parallel typed arrays over nodes 0..n-1, node 0 the root, every parent before its
  // children (Rust sends preorder; the inverted tree is built in creation order), so one backward pass
  // sums totals and one forward pass finds depths.
  function finish(name, parent, self, sorted) {
    const n = name.length;
    const t = {
      n, name, parent, self, sorted, zoom: 0,
      total: Float64Array.from(self),
      depth: new Int32Array(n),
      first: new Int32Array(n).fill(-1),
      next: new Int32Array(n).fill(-1),
      kids: new Map(), // node -> its children in drawing order, made when first drawn
    };
    for (let i = n - 1; i > 0; i--) {
      t.total[parent[i]] += t.total[i];
      t.next[i] = t.first[parent[i]];
      t.first[parent[i]] = i;
    }
    for (let i = 1; i < n; i++) t.depth[i] = t.depth[parent[i]] + 1;
    return t;
  }

  function fromData(v) {
    const shape = v.shape === undefined ? v : data.views[v.shape];
    const n = shape.depth.length;
    const parent = new Int32Array(n);
    const path = [];
    for (let i = 0; i < n; i++) {
      const d = shape.depth[i];
      path.length = d;
      parent[i] = d > 0 ? path[d - 1] : -1;
      path.push(i);
    }
    return finish(Int32Array.from(shape.name), parent, Float64Array.from(v.self), true);
  }

  // Sorting by name rank rather than by string: one comparison of two integers.
  let rank = null;
  function nameRank() {
    if (!rank) {
      const order = names.map((_, i) => i);
      order.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : kinds[a] < kinds[b] ? -1 : 1));
      rank = new Int32Array(names.length);
      order.forEach((n, r) => { rank[n] = r; });
    }
    return rank;
  }

  function children(t, node) {
    let c = t.kids.get(node);
    if (!c) {
      c = [];
      for (let k = t.first[node]; k >= 0; k = t.next[k]) c.push(k);
      if (!t.sorted) {
        const r = nameRank();
        // Merged frames (name -2) after the named ones.
        const at = (k) => (t.name[k] >= 0 ? r[t.name[k]] : names.length);
        c.sort((a, b) => at(a) - at(b));
      }
      t.kids.set(node, c);
    }
    return c;
  }

  // The callers' view: every stack read from its leaf, merged again. Built in the page, and only when
  // asked for, so the file carries one tree per view rather than two. The (parent, name) -> child map
  // is an open-addressing table over typed arrays: a JavaScript Map of a million numeric keys took
  // seconds on the 100,000-stack page.
  function invert(t) {
    const name = [-1], parent = [-1], self = [t.self[0]];
    let cap = 1 << 16;
    let keyNode = new Int32Array(cap).fill(-1), keyName = new Int32Array(cap), child = new Int32Array(cap);
    const slot = (node, nm, mask) => {
      let h = (Math.imul(node, 0x9e3779b1) ^ Math.imul(nm, 0x85ebca6b)) & mask;
      while (keyNode[h] !== -1 && (keyNode[h] !== node || keyName[h] !== nm)) h = (h + 1) & mask;
      return h;
    };
    const grow = () => {
      const [kn, km, kc] = [keyNode, keyName, child];
      cap *= 2;
      keyNode = new Int32Array(cap).fill(-1); keyName = new Int32Array(cap); child = new Int32Array(cap);
      for (let i = 0; i < kn.length; i++) {
        if (kn[i] === -1) continue;
        const h = slot(kn[i], km[i], cap - 1);
        keyNode[h] = kn[i]; keyName[h] = km[i]; child[h] = kc[i];
      }
    };
    for (let i = 1; i < t.n; i++) {
      const v = t.self[i];
      if (v === 0) continue;
      let node = 0;
      for (let j = i; j > 0; j = t.parent[j]) {
        const nm = t.name[j];
        let h = slot(node, nm, cap - 1);
        if (keyNode[h] === -1) {
          if (2 * name.length > cap) { grow(); h = slot(node, nm, cap - 1); }
          keyNode[h] = node; keyName[h] = nm; child[h] = name.length;
          name.push(nm);
          parent.push(node);
          self.push(0);
        }
        node = child[h];
      }
      self[node] += v;
    }
    return finish(Int32Array.from(name), Int32Array.from(parent), Float64Array.from(self), false);
  }

  const views = data.views.map((v) => ({ v, tree: null, inverted: null }));
  function tree(view, inverted) {
    if (!view.tree) view.tree = fromData(view.v);
    if (inverted && !view.inverted) view.inverted = invert(view.tree);
    return inverted ? view.inverted : view.tree;
  }

  // ---- state ---------------------------------------------------------------------------------------
  const state = { view: 0, inverted: false, hit: null, query: '' };
  let boxes = []; // what was drawn last: {node, x, w, row, merged, count, value, faded}
  let rows = []; // boxes per row, sorted by x, for hit tests

  function current() {
    return tree(views[state.view], state.inverted);
  }
  // Name -2: frames too small to see, merged (with all they called) when the page was written.
  const MERGED = -2;
  function label(t, node) {
    return node === 0 ? 'all' : t.name[node] === MERGED ? '…' : names[t.name[node]];
  }

  // ---- search --------------------------------------------------------------------------------------
  // "/re/flags" is a regular expression, anything else a plain substring (frame names are full of
  // regex characters: $, ., [).
  function search(q) {
    state.query = q;
    state.hit = null;
    $('search').classList.remove('bad');
    if (!q) return;
    let test;
    const m = /^\/(.+)\/([a-z]*)$/.exec(q);
    if (m) {
      let re;
      try {
        re = new RegExp(m[1], m[2].replace(/[gy]/g, ''));
      } catch (e) {
        $('search').classList.add('bad');
        return;
      }
      test = (s) => re.test(s);
    } else {
      test = (s) => s.includes(q);
    }
    state.hit = new Uint8Array(names.length);
    names.forEach((s, i) => { if (test(s)) state.hit[i] = 1; });
  }

  // The value of the stacks with at least one matching frame: each node's total counts once, at the
  // outermost match on its path, so recursion and nested matches are not counted twice.
  function matched(t) {
    const under = new Uint8Array(t.n);
    let sum = 0;
    for (let i = 1; i < t.n; i++) {
      if (under[t.parent[i]]) under[i] = 1;
      else if (state.hit[t.name[i]]) { under[i] = 1; sum += t.total[i]; }
    }
    return sum;
  }

  // ---- layout and drawing --------------------------------------------------------------------------
  function layout(t, width) {
    boxes = [];
    const z = t.zoom;
    // The zoomed frame's ancestors, full width and faded: clicking one zooms out to it.
    for (let a = t.parent[z], d = t.depth[z] - 1; a >= 0; a = t.parent[a], d--) {
      boxes.push({ node: a, x: 0, w: width, row: d, faded: true, value: t.total[a] });
    }
    const scale = t.total[z] > 0 ? width / t.total[z] : 0;
    const todo = [[z, 0, t.depth[z]]];
    while (todo.length) {
      const [node, x, row] = todo.pop();
      const w = t.total[node] * scale;
      boxes.push({ node, x, w, row, value: t.total[node] });
      if (row + 1 >= MAX_ROWS) continue;
      let cx = x;
      let narrow = null; // a run of sibling frames each narrower than MIN_W
      const flush = () => {
        if (narrow && narrow.w >= 0.5) boxes.push(narrow);
        narrow = null;
      };
      for (const k of children(t, node)) {
        const kw = t.total[k] * scale;
        if (kw < MIN_W) {
          if (!narrow) narrow = { node: k, x: cx, w: 0, row: row + 1, merged: true, count: 0, value: 0 };
          narrow.w += kw;
          narrow.count++;
          narrow.value += t.total[k];
        } else {
          flush();
          todo.push([k, cx, row + 1]);
        }
        cx += kw;
      }
      flush();
    }
    rows = [];
    for (const b of boxes) (rows[b.row] || (rows[b.row] = [])).push(b);
    for (const r of rows) if (r) r.sort((a, b) => a.x - b.x);
    return rows.length;
  }

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return (h >>> 0) / 4294967296;
  }
  // Application code warm, the JDK muted (it is rarely what one came to change), allocated classes
  // blue; the hue varies a little by name so that neighbours stay apart.
  function colour(t, b) {
    if (b.merged) return '#c8c8c8';
    if (b.node === 0) return '#d8d8d8';
    const n = t.name[b.node];
    if (n === MERGED) return '#c8c8c8';
    if (state.hit && state.hit[n]) return '#e040d0';
    const v = hash(names[n]);
    switch (kinds[n]) {
      case 'j': return `hsl(${165 + 25 * v},30%,${58 + 10 * v}%)`;
      case 'c': return `hsl(${205 + 25 * v},75%,${65 + 10 * v}%)`;
      default: return `hsl(${12 + 30 * v},85%,${58 + 10 * v}%)`;
    }
  }

  function rowY(row, height) {
    // The flame grows up from its root; the inverted view hangs down from the leaves (an icicle).
    return state.inverted ? row * ROW : height - (row + 1) * ROW;
  }

  function fit(text, w) {
    if (ctx.measureText(text).width <= w) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= w) lo = mid; else hi = mid - 1;
    }
    return lo >= 2 ? text.slice(0, lo) + '…' : '';
  }

  function draw() {
    const t = current();
    const view = views[state.view].v;
    const width = Math.max(200, $('chart').clientWidth);
    const nrows = Math.max(1, layout(t, width));
    const height = nrows * ROW;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const b of boxes) {
      const y = rowY(b.row, height);
      ctx.globalAlpha = b.faded ? 0.55 : 1;
      ctx.fillStyle = colour(t, b);
      ctx.fillRect(b.x, y, Math.max(b.w - 1, 0.5), ROW - 1);
      if (b.w > 24) {
        const text = fit(b.merged ? '…' : label(t, b.node), b.w - 6);
        if (text) {
          ctx.fillStyle = '#000';
          ctx.fillText(text, b.x + 3, y + ROW / 2);
        }
      }
    }
    ctx.globalAlpha = 1;

    const total = t.total[0];
    $('total').textContent = view.title + ': ' + fmtValue(total, view.unit);
    $('zoom').textContent = t.zoom === 0 ? ''
      : 'zoomed to ' + label(t, t.zoom) + ': ' + fmtValue(t.total[t.zoom], view.unit) + ', ' + pct(t.total[t.zoom], total);
    $('reset').disabled = t.zoom === 0;
    if (state.hit) {
      const m = matched(t);
      $('matched').textContent = 'matched ' + pct(m, total) + ' of ' + fmtValue(total, view.unit) + ' (' + fmtInt(m) + ')';
    } else {
      $('matched').textContent = '';
    }
  }

  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  // ---- interaction ---------------------------------------------------------------------------------
  function boxAt(ev) {
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    const height = r.height;
    const row = state.inverted ? Math.floor(y / ROW) : Math.floor((height - y) / ROW);
    const list = rows[row];
    if (!list) return null;
    let lo = 0, hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const b = list[mid];
      if (x < b.x) hi = mid - 1;
      else if (x >= b.x + b.w) lo = mid + 1;
      else return b;
    }
    return null;
  }

  canvas.addEventListener('click', (ev) => {
    const b = boxAt(ev);
    if (!b) return;
    const t = current();
    // A "…" box stands for many frames: zoom to their parent, where they are wider.
    t.zoom = b.merged ? t.parent[b.node] : b.node;
    draw();
  });

  canvas.addEventListener('mousemove', (ev) => {
    const b = boxAt(ev);
    if (!b) { tip.hidden = true; return; }
    const t = current();
    const view = views[state.view].v;
    const lines = [];
    if (b.merged) {
      lines.push(fmtInt(b.count) + ' frames narrower than a pixel');
    } else if (b.node !== 0 && t.name[b.node] === MERGED) {
      lines.push('… frames too small to see, merged with their callees when the page was written');
    } else {
      lines.push(label(t, b.node));
      if (b.node !== 0) lines.push(KIND_LABEL[kinds[t.name[b.node]]]);
    }
    lines.push(fmtValue(b.value, view.unit) + ', ' + pct(b.value, t.total[0]) + ' of all');
    if (t.zoom !== 0 && !b.faded) lines.push(pct(b.value, t.total[t.zoom]) + ' of the zoomed frame');
    if (!b.merged && t.self[b.node] > 0) lines.push('self: ' + fmtValue(t.self[b.node], view.unit));
    tip.textContent = lines.join('\n');
    tip.hidden = false;
    const pad = 14;
    const left = Math.min(ev.clientX + pad, window.innerWidth - tip.offsetWidth - 4);
    const top = ev.clientY + pad + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - pad : ev.clientY + pad;
    tip.style.left = Math.max(0, left) + 'px';
    tip.style.top = Math.max(0, top) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });

  $('reset').addEventListener('click', () => { current().zoom = 0; draw(); });
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') { current().zoom = 0; draw(); }
  });
  $('search').addEventListener('input', (ev) => { search(ev.target.value); redraw(); });
  $('invert').addEventListener('change', (ev) => { state.inverted = ev.target.checked; draw(); });
  const select = $('view');
  data.views.forEach((v, i) => {
    const o = document.createElement('option');
    o.value = String(i);
    o.textContent = v.title;
    select.appendChild(o);
  });
  select.addEventListener('change', () => { state.view = Number(select.value); draw(); });
  window.addEventListener('resize', redraw);

  // For tests and the curious: what is on the canvas, since a canvas has no elements to query.
  window.instrFlame = {
    drawn() {
      const t = current();
      const height = canvas.getBoundingClientRect().height;
      return boxes.map((b) => ({
        name: b.merged ? '…' : label(t, b.node), x: b.x, y: rowY(b.row, height), w: b.w, h: ROW,
        merged: !!b.merged, faded: !!b.faded, value: b.value,
      }));
    },
    state() {
      const t = current();
      return { view: views[state.view].v.id, inverted: state.inverted, zoom: label(t, t.zoom), total: t.total[0] };
    },
  };

  if (data.views.length === 0) {
    $('total').textContent = 'This profile has nothing to draw.';
    return;
  }
  draw();
})();
