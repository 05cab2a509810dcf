/* report.js - draws mprof-core's HTML report (--format html) from the JSON blob in
 * the script element #mprof-data: summary, icicle of live bytes by stack (hover,
 * click to zoom, search), timeline chart, top stacks, corruption and lost. Embedded
 * into the binary by cli/html/embed.sh; it loads nothing and sends nothing.
 * Every text from the core goes in through textContent, never as markup.
 * When done it sets data-rendered (ms spent here) and data-open-ms (ms since the
 * navigation started) on the html element, and data-painted-ms after the first
 * frame is painted: the tests and bench/html.sh wait for them.
 * (No double slash anywhere in this file: the tests grep the page for URLs.) */
(function () {
	'use strict';
	var t0 = performance.now();
	var D = JSON.parse(document.getElementById('mprof-data').textContent);
	var S = D.strings, F = D.frames;
	var app = document.getElementById('app');
	var ROW = 18;

	/* ---- helpers ---- */
	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined && text !== null) e.textContent = String(text);
		return e;
	}
	function add(parent, child) { parent.appendChild(child); return child; }
	function num(n) { return Number(n).toLocaleString('en-US'); }
	function pct(a, b) { return (b ? 100 * a / b : 0).toFixed(2) + '%'; }
	function base(p) { var i = p.lastIndexOf('/'); return i < 0 ? p : p.slice(i + 1); }
	function plural(n, w) { return num(n) + ' ' + w + (n === 1 ? '' : 's'); }
	function section(title, id) {
		var s = add(app, el('section'));
		s.id = id;
		add(s, el('h2', null, title));
		return s;
	}

	/* frame k of the table: 5 numbers (function, file, line, module, inlined) */
	function fName(k) { return S[F[5 * k]]; }
	function fWhere(k) {
		var file = S[F[5 * k + 1]], mod = S[F[5 * k + 3]];
		if (file) return base(file) + (F[5 * k + 2] ? ':' + F[5 * k + 2] : '');
		return mod ? 'in ' + mod : '';
	}
	function fInl(k) { return F[5 * k + 4] === 1; }
	function fMod(k) { return S[F[5 * k + 3]]; }

	/* one frame object of the JSON reports (corruption, lost) as text */
	function objFrame(f) {
		var s = f.function || f.addr;
		if (f.file) s += ' (' + base(f.file) + (f.line ? ':' + f.line : '') + ')';
		if (f.inlined) s += ' [inlined]';
		if (f.module) s += ' [' + base(f.module) + ']';
		return s;
	}
	function objFrames(parent, frames) {
		var box = add(parent, el('div', 'frames'));
		if (!frames || !frames.length) add(box, el('div', 'where', '(no frames recorded)'));
		(frames || []).forEach(function (f) { add(box, el('div', null, objFrame(f))); });
		return box;
	}

	/* ---- summary (the figures of the text report's summary) ---- */
	var sm = D.summary;
	add(app, el('h1', null, 'Heap of ' + base(sm.program) + ' (mprof-core)'));
	(function () {
		var s = section('Summary', 'summary');
		var t = add(s, el('div', 'summary'));
		function row(label, value, id, cls) {
			var kv = add(t, el('div', 'kv'));
			add(kv, el('span', 'k', label));
			add(kv, el('span', cls, value)).id = id;
		}
		var img = sm.kind + ', ' + sm.bits + '-bit ' + sm.endian + '-endian ' + sm.machine;
		if (sm.threads !== null) img += ', ' + plural(sm.threads, 'thread');
		row('program', sm.program, 'sum-program');
		row('image', sm.image + ' (' + img + ')', 'sum-image');
		row('threads', sm.threads === null ? '(raw dump)' : num(sm.threads), 'sum-threads');
		row('live blocks', num(sm.blocks), 'sum-blocks');
		row('requested bytes', num(sm.bytes), 'sum-bytes');
		row('with headers and guards', num(sm.with_overhead), 'sum-overhead');
		row('distinct stacks', num(sm.stacks), 'sum-stacks');
		row('freed blocks seen', num(sm.freed), 'sum-freed');
		row('damaged headers', num(sm.damaged), 'sum-damaged', sm.damaged ? 'bad' : null);
		if (sm.ignored_blocks)
			row('left out by --ignore-fn', num(sm.ignored_blocks) + ' blocks, ' +
				num(sm.ignored_bytes) + ' bytes', 'sum-ignored');
		row('missing from the image', sm.missing_writable || sm.truncated ?
			num(sm.missing_writable) + ' bytes of writable memory in ' + sm.missing_segments +
			' segments' + (sm.truncated ? ' (the file is truncated)' : '') +
			': blocks there are not seen' : 'nothing', 'sum-missing',
			sm.missing_writable || sm.truncated ? 'bad' : null);
		if (sm.not_dumped_readonly)
			row('not dumped (read-only file mappings)', num(sm.not_dumped_readonly) + ' bytes',
				'sum-readonly');
		if (D.corruption)
			add(s, el('p', 'bad', 'Heap corruption found: see below.'));
	})();

	/* ---- the icicle: tree of live bytes by stack, outermost frame on top ---- */
	var T = D.tree, N = T.length / 4;
	var par = new Int32Array(N), frm = new Int32Array(N), depth = new Int32Array(N);
	var bytes = new Float64Array(N), blocks = new Float64Array(N), folded = new Int32Array(N);
	var kids = [], maxDepth = 0, i, oi = 0;
	for (i = 0; i < N; i++) {
		par[i] = T[4 * i]; frm[i] = T[4 * i + 1];
		bytes[i] = T[4 * i + 2]; blocks[i] = T[4 * i + 3];
		kids.push([]);
		if (i) {
			kids[par[i]].push(i);
			depth[i] = depth[par[i]] + 1;
			if (depth[i] > maxDepth) maxDepth = depth[i];
		}
		if (frm[i] === -2) folded[i] = D.other[oi++];
	}
	kids.forEach(function (k) {
		k.sort(function (a, b) { return frm[a] === -2 ? 1 : frm[b] === -2 ? -1 : bytes[b] - bytes[a]; });
	});
	var total = N ? bytes[0] : 0;
	function label(n) {
		if (n === 0) return 'all: ' + num(bytes[0]) + ' bytes in ' + plural(blocks[0], 'block');
		if (frm[n] === -2) return 'other (' + plural(folded[n], 'smaller frame') + ')';
		return fName(frm[n]);
	}
	function hue(s) {
		var h = 0;
		for (var k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
		return Math.abs(h);
	}
	function color(n) {
		var h = hue(fName(frm[n]));
		if (fInl(frm[n])) return 'hsl(' + (195 + h % 30) + ',60%,' + (72 + h % 12) + '%)';
		return 'hsl(' + (h % 45) + ',' + (72 + h % 20) + '%,' + (62 + h % 14) + '%)';
	}

	var fs = section('Live bytes by allocation stack', 'flamegraph');
	var bar = add(fs, el('div', 'toolbar'));
	var search = add(bar, el('input'));
	search.id = 'fg-search';
	search.type = 'search';
	search.placeholder = 'search functions (substring)';
	var reset = add(bar, el('button', null, 'Reset zoom'));
	reset.id = 'fg-reset';
	var zoomInfo = add(bar, el('span', null, ''));
	zoomInfo.id = 'fg-zoom';
	var matchInfo = add(bar, el('span', null, ''));
	matchInfo.id = 'fg-match';
	var flame = add(fs, el('div'));
	flame.id = 'flame';
	var tip = add(document.body, el('div'));
	tip.id = 'tip';
	var pr = D.pruned;
	add(fs, el('p', 'note', 'Outermost frame on top, allocation site at the bottom; width is live ' +
		'requested bytes. Hover for details, click a frame to zoom into it, click the top bar or ' +
		'"Reset zoom" to go back. ' + (pr.nodes ? num(pr.nodes) + ' of ' + num(pr.of) +
		' tree nodes below ' + num(pr.min_bytes) + ' bytes (' + (pr.min_bytes > Math.ceil(total / 10000) ?
		'raised from 0.01% of the live bytes to keep at most ' + num(pr.max_nodes) + ' nodes' :
		'0.01% of the live bytes') + ') are folded into ' + plural(pr.other_nodes, '"other" node') +
		' (' + num(pr.bytes) + ' bytes).' : 'No frame was pruned (' + num(pr.of) + ' tree nodes).'))).id = 'fg-pruned';

	var zoom = 0, query = '', matched = null;
	function isMatch(n) {
		return query && n > 0 && frm[n] >= 0 && fName(frm[n]).toLowerCase().indexOf(query) >= 0;
	}
	function doSearch() {
		query = search.value.trim().toLowerCase();
		matched = null;
		if (!query) { matchInfo.textContent = ''; return; }
		/* bytes under the matched nodes that have no matched ancestor */
		var mb = 0, hit = new Uint8Array(N), nm = 0;
		for (var n = 1; n < N; n++) {
			var m = isMatch(n);
			if (m) nm++;
			hit[n] = hit[par[n]] || m ? 1 : 0;
			if (m && !hit[par[n]]) mb += bytes[n];
		}
		matched = hit;
		matchInfo.textContent = 'matched: ' + num(mb) + ' bytes (' + pct(mb, total) + ' of all) in ' +
			plural(nm, 'frame');
	}
	function render() {
		var W = flame.clientWidth || 1000, minw = 1 / W;
		var frag = document.createDocumentFragment(), rows = maxDepth + 1;
		var zb = bytes[zoom] || 1;
		function box(n, x, w, anc) {
			/* no text in a box too narrow to show any (laying it out costs the most):
			 * its label goes in data-label, for the tooltip's readers and the tests */
			var d = el('div', 'fg' + (n === 0 ? ' root' : '') + (frm[n] === -2 ? ' oth' : '') +
				(n > 0 && frm[n] >= 0 && fInl(frm[n]) ? ' inl' : '') +
				(anc ? ' anc' : '') + (matched && isMatch(n) ? ' hl' : ''), w * W >= 16 ? label(n) : null);
			if (w * W < 16) d.setAttribute('data-label', label(n));
			d.style.cssText = 'left:' + (100 * x) + '%;width:' + (100 * w) + '%;top:' + (depth[n] * ROW) + 'px' +
				(n > 0 && frm[n] >= 0 ? ';background:' + color(n) : '');
			d.setAttribute('data-n', n);
			frag.appendChild(d);
		}
		/* the zoomed node's ancestors span the whole width above it */
		for (var a = par[zoom]; zoom > 0 && a >= 0; a = par[a]) box(a, 0, 1, true);
		(function walk(n, x, w) {
			box(n, x, w, false);
			var k = kids[n], cx = x;
			for (var j = 0; j < k.length; j++) {
				var cw = w * bytes[k[j]] / (bytes[n] || 1);
				if (cw >= minw) walk(k[j], cx, cw);
				cx += cw;
			}
		})(zoom, 0, 1);
		flame.textContent = '';
		flame.style.height = (rows * ROW) + 'px';
		flame.appendChild(frag);
		zoomInfo.textContent = zoom ? 'zoomed into ' + label(zoom) + ': ' + num(zb) + ' bytes (' +
			pct(zb, total) + ' of all)' : '';
	}
	function node(ev) {
		var t = ev.target;
		return t && t.classList && t.classList.contains('fg') ? +t.getAttribute('data-n') : -1;
	}
	flame.addEventListener('click', function (ev) {
		var n = node(ev);
		if (n < 0) return;
		zoom = n === zoom && n > 0 ? par[n] : n;
		if (frm[zoom] === -2) zoom = par[zoom];
		render();
	});
	flame.addEventListener('mousemove', function (ev) {
		var n = node(ev);
		if (n < 0) { tip.style.display = 'none'; return; }
		tip.textContent = '';
		add(tip, el('div', 'fn', label(n)));
		if (n > 0 && frm[n] >= 0) {
			var w = fWhere(frm[n]);
			add(tip, el('div', 'where', (w || 'no line information') +
				(fMod(frm[n]) && w.indexOf('in ') !== 0 ? ' [' + fMod(frm[n]) + ']' : '') +
				(fInl(frm[n]) ? ' [inlined]' : '')));
		}
		add(tip, el('div', null, num(bytes[n]) + ' bytes in ' + plural(blocks[n], 'block') + ', ' +
			pct(bytes[n], total) + ' of all' + (zoom ? ', ' + pct(bytes[n], bytes[zoom]) + ' of the zoomed frame' : '')));
		tip.style.display = 'block';
		var x = ev.clientX + 14, y = ev.clientY + 14;
		if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, ev.clientX - tip.offsetWidth - 8);
		if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, ev.clientY - tip.offsetHeight - 8);
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	});
	flame.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
	reset.addEventListener('click', function () { zoom = 0; render(); });
	search.addEventListener('input', function () { doSearch(); render(); });
	var lastW = 0;
	window.addEventListener('resize', function () {
		if (flame.clientWidth !== lastW) { lastW = flame.clientWidth; render(); }
	});

	/* ---- the timeline: live bytes over time, from the statistics region ---- */
	(function () {
		var s = section('Timeline', 'timeline');
		var tl = D.timeline;
		if (!tl) {
			add(s, el('p', 'note', 'No statistics region in the image (a raw dump of the heap alone, ' +
				'or a program without libheapann\'s statistics): no timeline.'));
			return;
		}
		var pts = [], k;
		for (k = 0; k < tl.time.length; k++) pts.push([tl.time[k], tl.live[k]]);
		if (tl.peak_live) pts.push([tl.peak_time, tl.peak_live]);
		pts.push([tl.now_time, tl.now_live]);
		pts.sort(function (a, b) { return a[0] - b[0]; });
		var tmax = 1, ymax = 1;
		pts.forEach(function (p) { if (p[0] > tmax) tmax = p[0]; if (p[1] > ymax) ymax = p[1]; });
		function unit(v) {
			return v >= 10 * 1073741824 ? [1073741824, 'GB'] : v >= 10 * 1048576 ? [1048576, 'MB'] :
				v >= 10240 ? [1024, 'KB'] : [1, 'B'];
		}
		var yu = unit(ymax), xu = unit(tmax);
		var W = 1000, H = 260, L = 70, R = 20, TP = 24, B = 36, pw = W - L - R, ph = H - TP - B;
		function X(t) { return L + pw * t / tmax; }
		function Y(v) { return TP + ph - ph * v / ymax; }
		var host = add(s, el('div'));
		host.innerHTML = '<svg class="chart"/>';
		var svg = host.firstChild, NS = svg.namespaceURI;
		svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
		svg.setAttribute('width', '100%');
		svg.style.maxWidth = W + 'px';
		function sv(tag, attrs, text) {
			var e = document.createElementNS(NS, tag);
			for (var a in attrs) e.setAttribute(a, attrs[a]);
			if (text !== undefined) e.textContent = text;
			svg.appendChild(e);
			return e;
		}
		for (k = 0; k <= 4; k++) {
			var yv = ymax * k / 4, xv = tmax * k / 4;
			sv('line', { 'class': 'grid', x1: L, x2: W - R, y1: Y(yv), y2: Y(yv) });
			sv('text', { x: L - 6, y: Y(yv) + 4, 'text-anchor': 'end' },
				(yv / yu[0]).toFixed(yu[0] === 1 ? 0 : 1) + ' ' + yu[1]);
			sv('text', { x: X(xv), y: H - B + 16, 'text-anchor': 'middle' },
				(xv / xu[0]).toFixed(xu[0] === 1 ? 0 : 1) + ' ' + xu[1]);
		}
		sv('line', { 'class': 'axis', x1: L, x2: L, y1: TP, y2: TP + ph });
		sv('line', { 'class': 'axis', x1: L, x2: W - R, y1: TP + ph, y2: TP + ph });
		sv('text', { x: L + pw / 2, y: H - 4, 'text-anchor': 'middle' },
			'time: bytes allocated + freed');
		sv('text', { x: 4, y: 12 }, 'live bytes');
		/* live bytes hold until the next sample: a step line */
		var d = 'M' + X(0) + ',' + Y(0), prev = 0;
		pts.forEach(function (p) {
			d += ' L' + X(p[0]).toFixed(1) + ',' + Y(prev).toFixed(1) + ' L' + X(p[0]).toFixed(1) + ',' +
				Y(p[1]).toFixed(1);
			prev = p[1];
		});
		sv('path', { 'class': 'area', d: d + ' L' + X(pts[pts.length - 1][0]).toFixed(1) + ',' + Y(0) + ' Z' });
		sv('path', { 'class': 'line', d: d });
		if (tl.peak_live) {
			var px = X(tl.peak_time), py = Y(tl.peak_live);
			sv('line', { 'class': 'peakline', x1: px, x2: px, y1: py, y2: TP + ph });
			sv('circle', { 'class': 'peak', cx: px, cy: py, r: 4.5 });
			var lab = sv('text', { 'class': 'peaklabel', x: px + (px > W - 300 ? -8 : 8), y: Math.max(py - 8, 12),
				'text-anchor': px > W - 300 ? 'end' : 'start' }, 'peak: ' + num(tl.peak_live) + ' bytes');
			lab.id = 'tl-peak-label';
		}
		var p = add(s, el('p', 'note', 'peak: ' + num(tl.peak_live) + ' bytes live at time ' + num(tl.peak_time) +
			'; now: ' + num(tl.now_live) + ' bytes live at time ' + num(tl.now_time) + '; ' +
			plural(tl.time.length, 'sample') + ', one every ' + num(tl.interval) + ' bytes or more; ' +
			num(tl.allocs) + ' allocations and ' + num(tl.frees) + ' frees in the whole run.'));
		p.id = 'tl-peak';
	})();

	/* ---- top stacks ---- */
	(function () {
		var s = section('Top stacks', 'stacks');
		if (!D.stacks.length) {
			add(s, el('p', 'note', 'No live blocks.'));
			return;
		}
		var t = add(s, el('table', 'stacks'));
		var h = add(t, el('tr'));
		['#', 'bytes', '%', 'blocks', 'sizes', 'allocated at (allocation site first)'].forEach(function (c, k) {
			add(h, el('th', k < 4 ? 'num' : null, c));
		});
		D.stacks.forEach(function (r, k) {
			var tr = add(t, el('tr'));
			tr.id = 'stack-' + (k + 1);
			add(tr, el('td', 'num', '#' + (k + 1)));
			add(tr, el('td', 'num', num(r[0])));
			add(tr, el('td', 'num', pct(r[0], total)));
			add(tr, el('td', 'num', num(r[1])));
			add(tr, el('td', 'num', r[2] === r[3] ? num(r[2]) : num(r[2]) + '..' + num(r[3])));
			var fr = add(add(tr, el('td')), el('div', 'frames'));
			if (!r[4].length) add(fr, el('div', 'where', '(no frames recorded)'));
			r[4].forEach(function (f) {
				var line = add(fr, el('div', fInl(f) ? 'inl' : null, fName(f)));
				var w = fWhere(f);
				if (w) add(line, el('span', 'where', ' (' + w + ')'));
				if (fInl(f)) add(line, el('span', 'where', ' [inlined]'));
			});
		});
		var rest = D.stacks_rest;
		if (rest[0])
			add(s, el('p', 'note', '... ' + num(rest[0]) + ' more stacks with ' + num(rest[1]) +
				' bytes in ' + num(rest[2]) + ' blocks (' + (D.stacks_rest_hint || '--top 0 shows all') +
				')')).id = 'stacks-rest';
	})();

	/* ---- corruption findings ---- */
	if (D.corruption) (function () {
		var c = D.corruption.corruption;
		/* the words of the text report (report_corruption.c) for each kind of damage */
		var KIND = { check: 'check word or fields wrong', end: 'end magic overwritten',
			start: 'start magic overwritten, found by its end word', version: 'unknown format version',
			bounds: 'size or depth out of bounds, or not fully dumped' };
		var s = section('Heap corruption', 'corruption');
		add(s, el('p', 'bad', 'heap corruption: ' + plural(c.guards.length, 'block') + ' overflowed ' +
			(c.guards.length === 1 ? 'its' : 'their') + ' guard, ' + plural(c.damaged.length, 'damaged header')));
		c.guards.forEach(function (g) {
			var f = add(s, el('div', 'finding'));
			add(f, el('div', null, 'overflow: block ' + g.address + ' (' + num(g.size) + ' bytes, seq ' + g.seq +
				') wrote past its end: ' + (g.overrun_exact ? g.guard_bytes_differ + ' of ' + g.guard_len :
				(g.guard_bytes_differ === g.guard_len ? 'all ' : '') + g.guard_bytes_differ) +
				' guard bytes differ, the overrun is ' + (g.overrun_exact ? '' : 'at least ') +
				plural(g.overrun, 'byte')));
			if (g.next_damaged) {
				add(f, el('div', null, 'the next header, at ' + g.next_header + ', is damaged' +
					(g.reach ? ' up to ' + g.reach : '') + (g.overrun_if_contiguous ? ': at least ' + num(g.overrun_if_contiguous) + ' bytes if one overflow' : '')));
			} else if (g.next_block) {
				add(f, el('div', null, 'the next header found, at ' + g.next_header + ', is intact: block ' + g.next_block));
				if (g.lost_seqs) add(f, el('div', null, (g.lost_seqs === 1 ? 'the allocation between them, seq ' +
					g.first_lost_seq + ', is' : num(g.lost_seqs) + ' allocations between them (seq ' + g.first_lost_seq +
					' and on) are') + ' found nowhere in the image: perhaps the neighbour whose header this overflow erased'));
			} else if (!g.overrun_exact && !g.lost_neighbour) {
				add(f, el('div', null, 'no annotated header follows it in the same memory segment'));
			}
			if (g.lost_neighbour) {
				add(f, el('div', null, 'the next block, ' + g.lost_neighbour.address +
					', is known only by its end word; it was allocated at:'));
				objFrames(f, g.lost_neighbour.frames);
			}
			add(f, el('div', null, 'allocated at:'));
			objFrames(f, g.frames);
		});
		c.damaged.forEach(function (d) {
			var f = add(s, el('div', 'finding'));
			add(f, el('div', null, 'damaged header at ' + d.header + ' (' + (KIND[d.kind] || d.kind) + ')' +
				(d.address ? ': block ' + d.address : '') +
				(d.size !== null ? ', ' + num(d.size) + ' bytes, seq ' + d.seq : '')));
			if (d.frames) {
				add(f, el('div', null, 'allocated at (as far as the header could be read):'));
				objFrames(f, d.frames);
			} else {
				add(f, el('div', null, 'its allocation stack is overwritten'));
			}
			if (d.likely) add(f, el('div', null, 'likely: ' + (d.likely === 'overflow' ?
				'an overflow of the block just before it (its whole guard differs)' :
				'an underrun of this block')));
			if (d.suspect) {
				var sp = d.suspect;
				add(f, el('div', 'bad', 'suspect: ' + sp.state + ' block ' + sp.address +
					(sp.size !== null && sp.size !== undefined ? ' (' + num(sp.size) + ' bytes, seq ' + sp.seq + ')' : '') +
					' just before it' + (sp.gap >= 0 ? ', ' + num(sp.gap) + ' bytes between its guard and this header' : '') +
					(sp.guard_broken ? '; its guard is broken' : '')));
				add(f, el('div', null, 'allocated at:'));
				objFrames(f, sp.frames);
			} else {
				add(f, el('div', null, 'no block found before it in the same memory segment'));
			}
		});
		/* damage libheapann counted at run time: its blocks are gone from the core */
		var r = c.runtime;
		if (r && (r.guards || r.bad_frees)) {
			var rf = add(s, el('div', 'finding'));
			add(rf, el('div', 'bad', 'libheapann found at run time: ' + plural(r.guards, 'broken guard') +
				' (checked at free or realloc), ' + num(r.bad_frees) +
				' frees or reallocs of a freed or damaged block'));
			if (r.last_guard_block) {
				var lb = r.last_guard_block;
				add(rf, el('div', null, 'last broken guard: block ' + lb.address + ' (' + num(lb.size) +
					' bytes, seq ' + lb.seq + '), freed since; allocated at:'));
				objFrames(rf, lb.frames);
			}
		}
	})();

	/* ---- lost (only with --report=lost: the mark phase costs time) ---- */
	if (D.lost) (function () {
		var l = D.lost.lost;
		var s = section('Lost: reachability from the roots', 'lost');
		var t = add(s, el('table', 'summary'));
		t.id = 'lost-totals';
		Object.keys(l.totals).forEach(function (k) {
			var tr = add(t, el('tr'));
			add(tr, el('td', null, k));
			add(tr, el('td', 'num', num(l.totals[k].bytes) + ' bytes in ' + plural(l.totals[k].blocks, 'block')));
		});
		add(s, el('p', 'note', 'roots: ' + num(l.root_bytes) + ' bytes read' +
			(l.damaged_headers ? '; ' + num(l.damaged_headers) + ' damaged headers: their blocks are not classified' : '')));
		if (!l.records.length) return;
		var rt = add(s, el('table', 'stacks'));
		var h = add(rt, el('tr'));
		['category', 'bytes', 'blocks', 'allocated at'].forEach(function (c, k) {
			add(h, el('th', k === 1 || k === 2 ? 'num' : null, c));
		});
		l.records.forEach(function (r) {
			var tr = add(rt, el('tr'));
			add(tr, el('td', r.category === 'definitely lost' ? 'bad' : null, r.category));
			add(tr, el('td', 'num', num(r.bytes)));
			add(tr, el('td', 'num', num(r.blocks)));
			objFrames(add(tr, el('td')), r.frames);
		});
	})();

	add(app, el('p', 'note', 'Written by mprof-core --format html. Self-contained: this page loads nothing.'));
	lastW = flame.clientWidth;
	render();
	var root = document.documentElement;
	root.setAttribute('data-rendered', (performance.now() - t0).toFixed(1));
	root.setAttribute('data-open-ms', performance.now().toFixed(1));
	/* and once the browser has laid it out and painted it */
	requestAnimationFrame(function () {
		setTimeout(function () { root.setAttribute('data-painted-ms', performance.now().toFixed(1)); }, 0);
	});
})();
