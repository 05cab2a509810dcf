/* html_cdp.js - drive headless Chromium over the DevTools protocol on a pipe
 * (--remote-debugging-pipe: commands on fd 3, answers on fd 4, NUL-terminated
 * JSON), with no npm package: tests/run-html.sh uses it to hover, click and search
 * in an HTML report, bench/html.sh to time how long reports take to open.
 *
 * Usage:
 *   node tests/html_cdp.js interact FILE.html FUNCTION QUERY
 *       hover and click the first icicle frame labelled FUNCTION, reset, search for
 *       QUERY; prints key=value lines (tip=, zoom=, width=, match=, hl=, requests=)
 *   node tests/html_cdp.js open ROUNDS FILE.html...
 *       load each file ROUNDS times in turn (one browser); prints per file
 *       "open FILE wall_ms=MEDIAN page_ms=MEDIAN": wall time from the navigation
 *       command to the page's data-painted-ms marker (set once the report is drawn
 *       and painted; for a page without it, its load event), and the page's own
 *       figure (data-painted-ms, or performance.now() at its load event: ms since
 *       the navigation started)
 * Environment: CHROMIUM (default /usr/bin/chromium). Exits 1 on any failure. */
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mprof-cdp-'));
const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync',
	'--hide-scrollbars', '--window-size=1400,1000', '--user-data-dir=' + profile,
	'--remote-debugging-pipe', 'about:blank'];
const child = spawn(chromium, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let log = '';
child.stderr.on('data', (d) => { log += d; });

let nextId = 1, buf = '';
const pending = new Map(), listeners = [];
child.stdio[4].on('data', (d) => {
	buf += d.toString('utf8');
	let z;
	while ((z = buf.indexOf('\0')) >= 0) {
		const msg = JSON.parse(buf.slice(0, z));
		buf = buf.slice(z + 1);
		if (msg.id && pending.has(msg.id)) {
			const p = pending.get(msg.id);
			pending.delete(msg.id);
			if (msg.error) p.reject(new Error(p.method + ': ' + msg.error.message));
			else p.resolve(msg.result);
		} else if (msg.method) {
			listeners.forEach((l) => l(msg));
		}
	}
});

function send(method, params, sessionId) {
	const id = nextId++;
	const m = { id, method, params: params || {} };
	if (sessionId) m.sessionId = sessionId;
	child.stdio[3].write(JSON.stringify(m) + '\0');
	return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}

function fail(why) {
	console.error('html_cdp: ' + why);
	if (log) console.error(log.split('\n').slice(-5).join('\n'));
	try { child.kill('SIGKILL'); } catch (e) { /* already gone */ }
	fs.rmSync(profile, { recursive: true, force: true });
	process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function page() {
	const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
	const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
	await send('Page.enable', {}, sessionId);
	await send('Runtime.enable', {}, sessionId);
	await send('Network.enable', {}, sessionId);
	return sessionId;
}

async function evaluate(s, expr) {
	const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true }, s);
	if (r.exceptionDetails) throw new Error('evaluate: ' + expr + ': ' + r.exceptionDetails.text);
	return r.result.value;
}

/* Navigate and wait for the report's marker (or the load event of a page without
 * one). Returns the wall milliseconds from the command to that moment. */
async function open(s, url, marker) {
	let loaded = false;
	const onLoad = (m) => { if (m.sessionId === s && m.method === 'Page.loadEventFired') loaded = true; };
	listeners.push(onLoad);
	const t0 = process.hrtime.bigint();
	await send('Page.navigate', { url }, s);
	for (let k = 0; ; k++) {
		if (marker && loaded && await evaluate(s, 'document.documentElement.hasAttribute("data-painted-ms")'))
			break;
		if (!marker && loaded)
			break;
		if (k > 60000)
			throw new Error(url + ': not rendered within 60 s');
		await sleep(1);
	}
	const ms = Number(process.hrtime.bigint() - t0) / 1e6;
	listeners.splice(listeners.indexOf(onLoad), 1);
	return ms;
}

async function center(s, sel) {
	return evaluate(s, '(function () { var e = ' + sel + '; if (!e) return null;' +
		' var r = e.getBoundingClientRect(); return [r.left + Math.min(r.width / 2, 20), r.top + r.height / 2]; })()');
}

async function interact(file, fn, query) {
	const s = await page();
	const requests = [];
	listeners.push((m) => { if (m.method === 'Network.requestWillBeSent') requests.push(m.params.request.url); });
	const url = 'file://' + path.resolve(file);
	await open(s, url, true);
	const frameSel = 'Array.prototype.find.call(document.querySelectorAll("#flame .fg"), function (e) {' +
		' return (e.textContent || e.getAttribute("data-label")) === ' + JSON.stringify(fn) + '; })';
	const at = await center(s, frameSel);
	if (!at) throw new Error('no icicle frame labelled ' + fn);
	/* hover: the tooltip */
	await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at[0], y: at[1] }, s);
	await sleep(50);
	const tip = await evaluate(s, 'var t = document.getElementById("tip"); t.style.display === "block" ?' +
		' Array.prototype.map.call(t.children, function (c) { return c.textContent; }).join(" | ") : ""');
	console.log('tip=' + tip);
	/* click: zoom into it; the frame then spans the whole width */
	await send('Input.dispatchMouseEvent', { type: 'mousePressed', x: at[0], y: at[1], button: 'left', clickCount: 1 }, s);
	await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: at[0], y: at[1], button: 'left', clickCount: 1 }, s);
	await sleep(50);
	console.log('zoom=' + await evaluate(s, 'document.getElementById("fg-zoom").textContent'));
	console.log('width=' + await evaluate(s, '(function () { var e = ' + frameSel + ';' +
		' return e ? (e.getBoundingClientRect().width / document.getElementById("flame").clientWidth).toFixed(3) : "none"; })()'));
	/* back out: click the root bar */
	const root = await center(s, 'document.querySelector("#flame .fg.root")');
	await send('Input.dispatchMouseEvent', { type: 'mousePressed', x: root[0], y: root[1], button: 'left', clickCount: 1 }, s);
	await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: root[0], y: root[1], button: 'left', clickCount: 1 }, s);
	await sleep(50);
	console.log('unzoom=' + await evaluate(s, 'document.getElementById("fg-zoom").textContent'));
	/* search: typed into the box */
	const box = await center(s, 'document.getElementById("fg-search")');
	await send('Input.dispatchMouseEvent', { type: 'mousePressed', x: box[0], y: box[1], button: 'left', clickCount: 1 }, s);
	await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: box[0], y: box[1], button: 'left', clickCount: 1 }, s);
	await send('Input.insertText', { text: query }, s);
	await sleep(50);
	console.log('match=' + await evaluate(s, 'document.getElementById("fg-match").textContent'));
	console.log('hl=' + await evaluate(s, 'Array.prototype.map.call(document.querySelectorAll("#flame .fg.hl"),' +
		' function (e) { return e.textContent; }).join(",")'));
	console.log('requests=' + requests.filter((u) => u !== url).join(' '));
}

async function openBench(rounds, files) {
	const s = await page();
	const times = files.map(() => ({ wall: [], page: [] }));
	for (let r = 0; r < rounds; r++) {
		for (let k = 0; k < files.length; k++) {
			const url = 'file://' + path.resolve(files[k]);
			await open(s, 'about:blank', false);
			const marker = fs.readFileSync(files[k], 'utf8').indexOf('mprof-data') >= 0;
			times[k].wall.push(await open(s, url, marker));
			times[k].page.push(marker ? Number(await evaluate(s, 'document.documentElement.getAttribute("data-painted-ms")')) :
				await evaluate(s, 'performance.now()'));
		}
	}
	const med = (v) => { const a = v.slice().sort((x, y) => x - y); return a[(a.length - 1) >> 1]; };
	files.forEach((f, k) => console.log('open ' + f + ' wall_ms=' + med(times[k].wall).toFixed(1) +
		' page_ms=' + med(times[k].page).toFixed(1)));
}

async function main() {
	const [mode, ...rest] = process.argv.slice(2);
	await send('Target.setDiscoverTargets', { discover: false });
	if (mode === 'interact' && rest.length === 3)
		await interact(rest[0], rest[1], rest[2]);
	else if (mode === 'open' && rest.length >= 2)
		await openBench(Number(rest[0]), rest.slice(1));
	else
		fail('usage: html_cdp.js interact FILE FUNCTION QUERY | open ROUNDS FILE...');
	await send('Browser.close').catch(() => {});
	await new Promise((r) => { child.on('exit', r); setTimeout(r, 3000); });
	fs.rmSync(profile, { recursive: true, force: true });
}

const watchdog = setTimeout(() => fail('timed out after 300 s'), 300000);
main().then(() => { clearTimeout(watchdog); process.exit(0); }, (e) => fail(e.message));
