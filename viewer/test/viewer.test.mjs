// viewer/test/viewer.test.mjs — the replay page in a real browser: Debian's Chromium
// (/usr/bin/chromium), headless, driven by playwright-core. Registered with ctest as
// viewer_browser (viewer/CMakeLists.txt):
//
//   node viewer/test/viewer.test.mjs --cli build/bin/diffphys --scenes examples/scenes \
//        --work-dir build/viewer/test
//
// It writes replay pages of example scenes with the built `diffphys` (simulate --view, and
// simulate --out then view), plus one whose trajectory is edited to carry a convex mesh, a
// shape type the viewer does not know and a loss curve, and soft pages (a cloth falling on a
// sphere with simulate --view; the coupled cloth-on-pendulum with simulate --out then view),
// and checks for each page:
//   - it loads with no console error, no uncaught exception and no network request;
//   - the 3D canvas is not blank (its pixels vary);
//   - moving the time scrubber moves the rendered bodies (screenshots at two times differ),
//     while returning to the first time gives the first picture back (the difference is the
//     motion, not noise);
//   - the plots are drawn, and the toggles hide and show what they name;
//   - soft pages: the soft mesh is drawn (its surface triangles and springs as in the file's
//     "topology"; hiding it changes the picture), its nodes are drawn at the recorded
//     positions and move between the two times.
// A page filmed with `simulate --cameras` (the pendulum-cart's 288 × 96 camera) shows the scene
// camera's frames beside the 3D view: the recorded frame nearest the scrubber's time, a picture
// that is not blank and changes as the cart and pole move.
// And one page loaded with WebGL refused (as a headless browser without a software GL does):
// the 3D view shows a message pointing to `diffphys render`, and the plots are still drawn.
// WebGL runs on SwiftShader (ANGLE's CPU Vulkan): no GPU is needed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

function option(name) {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0 || !process.argv[index + 1]) {
    console.error(`usage: node viewer.test.mjs --cli DIFFPHYS --scenes DIR --work-dir DIR (missing --${name})`);
    process.exit(2);
  }
  return path.resolve(process.argv[index + 1]);
}
const cli = option('cli');
const scenes = option('scenes');
const workDir = option('work-dir');
fs.rmSync(workDir, { recursive: true, force: true });
fs.mkdirSync(workDir, { recursive: true });

const diffphys = (...args) => execFileSync(cli, args, { stdio: ['ignore', 'ignore', 'inherit'] });

// --- The pages under test ---------------------------------------------------------------
const ballPage = path.join(workDir, 'bouncing_ball.html');
diffphys('simulate', path.join(scenes, 'bouncing_ball.json'), '--steps', '1200', '--every', '10', '--quiet',
  '--view', ballPage);

const pendulumTrajectory = path.join(workDir, 'pendulum.json');
const pendulumPage = path.join(workDir, 'pendulum.html');
diffphys('simulate', path.join(scenes, 'pendulum.json'), '--steps', '1500', '--every', '10', '--quiet',
  '--out', pendulumTrajectory);
diffphys('view', pendulumTrajectory, '-o', pendulumPage, '--quiet');

const stackTrajectory = path.join(workDir, 'box_stack.json');
const stackPage = path.join(workDir, 'box_stack.html');
diffphys('simulate', path.join(scenes, 'box_stack.json'), '--steps', '400', '--every', '4', '--quiet',
  '--out', stackTrajectory);
// Edit the trajectory: convex meshes (a tetrahedron by its vertices only, a scaled cube by
// its faces) and a shape type from the future ("torus") on the top box, a body name that
// would end a <script> element if the page did not escape it, and a loss curve as an
// optimisation writes one.
const stack = JSON.parse(fs.readFileSync(stackTrajectory, 'utf8'));
const top = stack.model.bodies[stack.model.bodies.length - 1];
top.shapes.push({ name: 'hull', type: 'mesh', position: [0, 0, 0.25], orientation: [1, 0, 0, 0],
  vertices: [[0.1, 0, 0], [-0.05, 0.09, 0], [-0.05, -0.09, 0], [0, 0, 0.15]] });
top.shapes.push({ name: 'cube', type: 'mesh', position: [0.2, 0, 0], orientation: [1, 0, 0, 0], scale: 0.05,
  vertices: [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]],
  faces: [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]] });
top.shapes.push({ name: 'ring', type: 'torus', position: [0, 0, -0.25], orientation: [1, 0, 0, 0],
  radius: 0.08 });
stack.name = 'box stack </script><b>edited</b>';
stack.loss = Array.from({ length: 40 }, (_, i) => 10 * Math.exp(-i / 6) + 0.01);
const editedTrajectory = path.join(workDir, 'box_stack_edited.json');
fs.writeFileSync(editedTrajectory, JSON.stringify(stack));
diffphys('view', editedTrajectory, '-o', stackPage, '--quiet');

// Soft scenes (examples/soft, next to examples/scenes).
const softScenes = path.join(scenes, '..', 'soft');
const clothPage = path.join(workDir, 'cloth_on_sphere.html');
diffphys('simulate', path.join(softScenes, 'cloth_on_sphere.json'), '--steps', '40', '--every', '2', '--quiet',
  '--view', clothPage);
const coupledTrajectory = path.join(workDir, 'cloth_on_pendulum.json');
const coupledPage = path.join(workDir, 'cloth_on_pendulum.html');
diffphys('simulate', path.join(softScenes, 'cloth_on_pendulum.json'), '--steps', '40', '--every', '2', '--quiet',
  '--out', coupledTrajectory);
diffphys('view', coupledTrajectory, '-o', coupledPage, '--quiet');

// The pendulum-cart filmed by its camera (examples/scenes/pendulum_cart.json), pushed by nothing:
// the pole swings from 0.4 rad.
const cartPage = path.join(workDir, 'pendulum_cart.html');
diffphys('simulate', path.join(scenes, 'pendulum_cart.json'), '--steps', '60', '--every', '3', '--quiet',
  '--cameras', '--view', cartPage);

// --- Browser ----------------------------------------------------------------------------
const userDataDir = fs.mkdtempSync(path.join(workDir, 'chromium-profile-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 720, height: 420 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const networkRequests = [];
await context.route('**/*', (route) => {
  const url = route.request().url();
  if (url.startsWith('file:') || url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return route.continue();
  networkRequests.push(url);
  return route.abort();
});

// Pixel statistics of PNG screenshots, decoded by the browser itself in a blank page.
const analyser = await context.newPage();
async function pixelStats(pngA, pngB = null) {
  return analyser.evaluate(async ([a, b]) => {
    const decode = async (base64) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const g = canvas.getContext('2d');
      g.drawImage(bitmap, 0, 0);
      return g.getImageData(0, 0, bitmap.width, bitmap.height).data;
    };
    const first = await decode(a);
    const pixels = first.length / 4;
    let sum = 0, sumSquares = 0;
    const colours = new Set();
    for (let i = 0; i < first.length; i += 4) {
      const luminance = 0.299 * first[i] + 0.587 * first[i + 1] + 0.114 * first[i + 2];
      sum += luminance;
      sumSquares += luminance * luminance;
      colours.add((first[i] << 16) | (first[i + 1] << 8) | first[i + 2]);
    }
    const mean = sum / pixels;
    const result = { pixels, luminanceStd: Math.sqrt(Math.max(0, sumSquares / pixels - mean * mean)), colours: colours.size };
    if (b) {
      const second = await decode(b);
      let differing = 0;
      for (let i = 0; i < first.length; i += 4) {
        if (Math.abs(first[i] - second[i]) + Math.abs(first[i + 1] - second[i + 1]) + Math.abs(first[i + 2] - second[i + 2]) > 24) ++differing;
      }
      result.differingFraction = second.length === first.length ? differing / pixels : 1;
    }
    return result;
  }, [pngA.toString('base64'), pngB ? pngB.toString('base64') : null]);
}

let failures = 0;
async function check(label, body) {
  const start = performance.now();
  try {
    await body();
    console.log(`ok   ${label} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  } catch (error) {
    ++failures;
    console.log(`FAIL ${label}\n     ${error.stack ?? error}`);
  }
}

// Loads a page, checks it and closes it. `times`: fractions of the duration.
async function checkPage(file, { label, times, expectNotes = [], expectLoss = false, expectContacts = false, expectSoft = false }) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => errors.push(`exception: ${error.message}`));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => window.diffphysViewer?.ready === true, null, { timeout: 30000 });

  // Moves the scrubber as a user does (an input event on the range element), then waits
  // until the page has rendered the new time.
  const scrubTo = async (fraction) => {
    const rendered = await page.evaluate((f) => {
      const scrubber = document.getElementById('scrubber');
      const low = Number(scrubber.min), high = Number(scrubber.max);
      const before = window.diffphysViewer.framesRendered;
      scrubber.value = String(low + f * (high - low));
      scrubber.dispatchEvent(new Event('input', { bubbles: true }));
      return before;
    }, fraction);
    await page.waitForFunction((n) => window.diffphysViewer.framesRendered > n, rendered, { timeout: 10000 });
    return page.locator('#viewport canvas').screenshot();
  };

  await check(`${label}: plays on load, pauses on the button`, async () => {
    assert.equal(await page.evaluate(() => window.diffphysViewer.playing), true);
    await page.click('#play');
    assert.equal(await page.evaluate(() => window.diffphysViewer.playing), false);
    assert.equal(await page.textContent('#play'), 'Play');
  });

  // The drawn soft nodes against the file's frames (the page's own embedded copy).
  const softNodes = () => page.evaluate(() => {
    const soft = window.diffphysViewer.soft;
    return soft ? Array.from({ length: soft.nodeCount }, (_, i) => soft.nodePosition(i)) : null;
  });
  const first = await scrubTo(times[0]);
  const firstNodes = await softNodes();
  const second = await scrubTo(times[1]);
  const secondNodes = await softNodes();
  const firstAgain = await scrubTo(times[0]);
  if (expectSoft) {
    await check(`${label}: the soft mesh is drawn from the file's topology, at the recorded positions, and moves`, async () => {
      const file = await page.evaluate(() => JSON.parse(document.getElementById('diffphys-trajectory').textContent));
      // A world of several parts holds the soft part's own document under "parts".
      const data = file.format === 'diffphys-world-trajectory' ? file.parts.soft : file;
      const soft = await page.evaluate(() => {
        const s = window.diffphysViewer.soft;
        return s && { nodeCount: s.nodeCount, triangleCount: s.triangleCount, edgeCount: s.edgeCount, visible: s.visible };
      });
      assert.ok(soft, 'the page has no soft mesh');
      assert.equal(soft.visible, true);
      assert.equal(soft.nodeCount, data.node_count);
      assert.ok(data.topology.surface_triangles.length + data.topology.edges.length > 0, 'the file has no topology');
      assert.equal(soft.triangleCount, data.topology.surface_triangles.length);
      assert.equal(soft.edgeCount, data.topology.edges.length);
      const frames = data.frames;
      const expectFrame = (nodes, frame, when) => {
        let worst = 0;
        nodes.forEach((p, i) => { for (let k = 0; k < 3; ++k) worst = Math.max(worst, Math.abs(p[k] - frame.positions[3 * i + k])); });
        assert.ok(worst < 1e-5, `drawn nodes are ${worst} m from frame at t=${frame.time} (${when})`);
      };
      assert.ok(times[0] === 0 && times[1] === 1, 'soft pages are checked at the first and the last frame');
      expectFrame(firstNodes, frames[0], 'first');
      expectFrame(secondNodes, frames[frames.length - 1], 'last');
      let moved = 0;
      firstNodes.forEach((p, i) => { moved = Math.max(moved, Math.hypot(p[0] - secondNodes[i][0], p[1] - secondNodes[i][1], p[2] - secondNodes[i][2])); });
      assert.ok(moved > 0.01, `the soft nodes moved at most ${moved} m`);
    });
  }
  await check(`${label}: the canvas is not blank`, async () => {
    const stats = await pixelStats(first);
    assert.ok(stats.luminanceStd > 8 && stats.colours > 50,
      `pixels hardly vary: luminance std ${stats.luminanceStd.toFixed(2)}, ${stats.colours} colours`);
  });
  await check(`${label}: moving the scrubber moves the bodies`, async () => {
    const moved = await pixelStats(first, second);
    assert.ok(moved.differingFraction > 0.002,
      `only ${(100 * moved.differingFraction).toFixed(3)}% of pixels changed between t=${times[0]} and t=${times[1]} of the run`);
    const back = await pixelStats(first, firstAgain);
    assert.ok(back.differingFraction < 0.1 * moved.differingFraction,
      `returning to the first time changed ${(100 * back.differingFraction).toFixed(3)}% of pixels`);
    const clock = await page.textContent('#clock');
    assert.match(clock, /^t = [0-9.]+ s/);
  });
  await check(`${label}: the plots are drawn`, async () => {
    for (const id of ['energy-plot', 'position-plot', 'velocity-plot', 'angular-plot', ...(expectLoss ? ['loss-plot'] : [])]) {
      const stats = await pixelStats(await page.locator(`#${id}`).screenshot());
      assert.ok(stats.colours > 10, `#${id} looks empty (${stats.colours} colours)`);
    }
    assert.equal(await page.isVisible('#loss-section'), expectLoss);
  });
  await check(`${label}: notes`, async () => {
    const notes = await page.evaluate(() => window.diffphysViewer.notes);
    for (const expected of expectNotes) assert.ok(notes.some((note) => note.includes(expected)), `no note about ${expected}: ${JSON.stringify(notes)}`);
    if (expectNotes.length === 0) assert.deepEqual(notes, []);
  });
  // Clicking a checkbox as a user does, then waiting for the page to render the change.
  const toggleTo = async (id, checked) => {
    const rendered = await page.evaluate(() => window.diffphysViewer.framesRendered);
    if (checked) await page.check(`#${id}`); else await page.uncheck(`#${id}`);
    await page.waitForFunction((n) => window.diffphysViewer.framesRendered > n, rendered, { timeout: 10000 });
    return page.locator('#viewport canvas').screenshot();
  };
  await check(`${label}: the toggles hide and show ${expectContacts ? 'the contacts, forces and grid' : 'the grid'}${expectSoft ? ' and the soft mesh' : ''}`, async () => {
    await scrubTo(times[1]);
    const ids = ['show-grid', ...(expectContacts ? ['show-contacts', 'show-forces'] : []), ...(expectSoft ? ['show-soft'] : [])];
    for (const id of ids) {
      const shown = await page.locator('#viewport canvas').screenshot();
      const hidden = await toggleTo(id, false);
      const again = await toggleTo(id, true);
      const off = await pixelStats(shown, hidden);
      const on = await pixelStats(shown, again);
      assert.ok(off.differingFraction > 0.0002, `unchecking #${id} changed ${(100 * off.differingFraction).toFixed(4)}% of pixels`);
      assert.ok(on.differingFraction < 0.2 * off.differingFraction, `checking #${id} again did not restore the picture`);
    }
  });
  await check(`${label}: no console errors, no network`, async () => {
    assert.deepEqual(errors, []);
    assert.deepEqual(networkRequests, []);
  });
  // A finished page is closed: each open page keeps its own software-rendered WebGL context;
  // with all five left open, Chromium once closed itself mid-test on a loaded 2-core machine.
  await page.close();
}

// The camera panel of a page filmed with --cameras: frame 0 at the start, the last frame at the
// end, each a decoded picture of the camera's size that is not blank, the two different.
async function checkCameraPage(file) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => errors.push(`exception: ${error.message}`));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => window.diffphysViewer?.ready === true, null, { timeout: 30000 });
  const showAt = async (fraction) => {
    await page.evaluate((f) => {
      const scrubber = document.getElementById('scrubber');
      if (window.diffphysViewer.playing) document.getElementById('play').click();
      scrubber.value = String(Number(scrubber.min) + f * (Number(scrubber.max) - Number(scrubber.min)));
      scrubber.dispatchEvent(new Event('input', { bubbles: true }));
    }, fraction);
    await page.waitForFunction(() => {
      const image = document.getElementById('camera-frame');
      return image.complete && image.naturalWidth > 0;
    }, null, { timeout: 10000 });
    return {
      camera: await page.evaluate(() => window.diffphysViewer.camera),
      size: await page.evaluate(() => [document.getElementById('camera-frame').naturalWidth,
        document.getElementById('camera-frame').naturalHeight]),
      picture: await page.locator('#camera-frame').screenshot(),
    };
  };
  await check('pendulum-cart (simulate --cameras --view): the camera\'s frames beside the 3D view', async () => {
    assert.ok(await page.isVisible('#camera-section'), 'no camera section');
    assert.match(await page.textContent('#camera-select'), /side \(288 × 96\)/);
    const first = await showAt(0);
    assert.deepEqual(first.camera, { name: 'side', frame: 0 });
    assert.deepEqual(first.size, [288, 96]);
    const last = await showAt(1);
    const frameCount = await page.evaluate(() => window.diffphysViewer.frameCount);
    assert.deepEqual(last.camera, { name: 'side', frame: frameCount - 1 });
    const stats = await pixelStats(first.picture, last.picture);
    assert.ok(stats.colours > 20, `the camera frame looks blank (${stats.colours} colours)`);
    assert.ok(stats.differingFraction > 0.001, `the camera frames do not change (${stats.differingFraction})`);
    assert.deepEqual(errors, []);
    assert.deepEqual(networkRequests, []);
  });
  await page.close();
}

// The ball's page with every WebGL context refused by the browser.
async function checkWithoutWebGL(file) {
  const page = await context.newPage();
  const exceptions = [];
  page.on('pageerror', (error) => exceptions.push(error.message));
  await page.addInitScript(() => {
    const getContext = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
      return /webgl/i.test(type) ? null : getContext.call(this, type, ...rest);
    };
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => window.diffphysViewer?.ready === true, null, { timeout: 30000 });
  await check('without WebGL: the 3D view says so and names diffphys render; the plots are drawn', async () => {
    assert.equal(await page.evaluate(() => window.diffphysViewer.webgl), false);
    assert.ok(await page.isVisible('#no-webgl'), 'no message in the 3D view');
    const text = await page.textContent('#no-webgl');
    assert.match(text, /needs WebGL/);
    assert.match(text, /diffphys render/);
    for (const id of ['energy-plot', 'position-plot']) {
      const stats = await pixelStats(await page.locator(`#${id}`).screenshot());
      assert.ok(stats.colours > 10, `#${id} looks empty (${stats.colours} colours)`);
    }
    assert.deepEqual(exceptions, []);
  });
  await page.close();
}

try {
  await checkWithoutWebGL(ballPage);
  await checkCameraPage(cartPage);
  // Ball: from 1 m at t = 0 to near the ground at 35% of the 1.2 s.
  await checkPage(ballPage, { label: 'bouncing ball (simulate --view)', times: [0, 0.35] });
  await checkPage(pendulumPage, { label: 'pendulum (view)', times: [0, 0.25] });
  await checkPage(stackPage, {
    label: 'edited box stack (view): mesh, unknown shape, loss', times: [0, 1], expectLoss: true, expectContacts: true,
    expectNotes: ['"torus"'],
  });
  await checkPage(clothPage, { label: 'cloth on sphere (soft, simulate --view)', times: [0, 1], expectSoft: true });
  await checkPage(coupledPage, { label: 'cloth on pendulum (coupled, view)', times: [0, 1], expectSoft: true });
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
if (failures > 0) {
  console.log(`${failures} check(s) failed; pages are in ${workDir}`);
  process.exit(1);
}
console.log('all viewer checks passed');
