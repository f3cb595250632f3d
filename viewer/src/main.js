// viewer/src/main.js — the replay page: reads the trajectory embedded in the page
// (<script id="diffphys-trajectory" type="application/json">), draws the bodies with
// three.js, plays them back (play/pause, speed, time scrubber, orbiting camera), shows the
// contacts and their forces, and plots energy, a chosen body's position, velocity and
// angular velocity, and the loss curve of an optimisation beside the motion. Soft and coupled
// trajectories add deforming soft meshes (softbody.js) and the soft scene's obstacles; a
// trajectory filmed with `simulate --cameras` shows a scene camera's frames in the panel.
// Everything is in the one HTML file (docs/viewer.md); nothing is fetched.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { Plot } from './plot.js';
import { locateTime, readTrajectory } from './trajectory.js';
import { bodyColor, bodyRadius, buildShape, toQuaternion, vector } from './scene.js';
import { SoftBody, buildObstacle } from './softbody.js';

const $ = (id) => document.getElementById(id);

function showFatal(error) {
  const box = document.createElement('div');
  box.className = 'error';
  box.textContent = `diffphys viewer: ${error.message}`;
  document.body.replaceChildren(box);
  console.error(`diffphys viewer: ${error.message}`);
}

// The 3D view needs WebGL. Where the browser cannot create a WebGL context (a headless browser
// without a GPU or a software fallback, WebGL turned off), the view says so, and where to get
// pictures without a browser, instead of staying blank; the panel and the plots still work.
function createRenderer(viewport) {
  try {
    return new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  } catch (error) {
    showWithoutWebGL(viewport, error?.message ?? String(error));
    return null;
  }
}

function showWithoutWebGL(viewport, reason) {
  const box = document.createElement('div');
  box.id = 'no-webgl';
  box.setAttribute('role', 'alert');
  box.textContent = `The 3D view needs WebGL, which this browser could not provide (${reason}). ` +
    'The plots still work. To make pictures of this trajectory without a browser, run ' +
    '"diffphys render TRAJECTORY.json --out frames/" (one PNG per frame; docs/viewer.md).';
  viewport.replaceChildren(box);
  console.warn(`diffphys viewer: no WebGL (${reason}): the 3D view is not drawn`);
}

function sceneBounds(trajectory, radii) {
  const box = new THREE.Box3();
  const point = new THREE.Vector3();
  const frameCount = trajectory.times.length;
  const stride = Math.max(1, Math.floor(frameCount / 2000));
  trajectory.positions.forEach((positions, b) => {
    for (let f = 0; f < frameCount; f += stride) {
      point.set(positions[3 * f], positions[3 * f + 1], positions[3 * f + 2]);
      if (!Number.isFinite(point.x + point.y + point.z)) continue;
      box.expandByPoint(point.clone().addScalar(radii[b]));
      box.expandByPoint(point.clone().subScalar(radii[b]));
    }
  });
  const soft = trajectory.soft;
  if (soft) {
    const n = soft.nodeCount;
    const nodeStride = Math.max(1, Math.floor(n / 2000));
    for (let f = 0; f < frameCount; f += stride) {
      for (let i = 0; i < n; i += nodeStride) {
        const at = 3 * (n * f + i);
        point.set(soft.positions[at], soft.positions[at + 1], soft.positions[at + 2]);
        if (Number.isFinite(point.x + point.y + point.z)) box.expandByPoint(point);
      }
    }
  }
  if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, 0), new THREE.Vector3(1, 1, 1));
  return box;
}

function start() {
  const element = $('diffphys-trajectory');
  const trajectory = readTrajectory(JSON.parse(element.textContent));
  const notes = [];
  const times = trajectory.times;
  const startTime = times[0], endTime = times[times.length - 1];
  const model = trajectory.model;
  if (!model && trajectory.bodyNames.length > 0) notes.push('this trajectory has no "model" block (it was written without the parameters): ' +
    'each body is drawn as a small sphere at its centre of mass');
  if (trajectory.solver.nonConverged > 0)
    notes.push(`the solver did not converge at ${trajectory.solver.nonConverged} recorded steps`);

  // Model bodies by name: model.bodies[0] is the world, the rest follow "bodies".
  const modelBodies = new Map((model?.bodies ?? []).map((body) => [body.name, body]));
  const recorded = trajectory.bodyNames.map((name) => modelBodies.get(name) ?? null);
  const radii = recorded.map((body) => bodyRadius(body) || 0.05);
  const bounds = sceneBounds(trajectory, radii);
  const center = bounds.getCenter(new THREE.Vector3());
  const sceneRadius = Math.max(0.25, bounds.getSize(new THREE.Vector3()).length() / 2);

  // Renderer, camera (z up), lights, controls.
  const viewport = $('viewport');
  let renderer = createRenderer(viewport);
  if (renderer) {
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    viewport.appendChild(renderer.domElement);
    renderer.domElement.addEventListener('webglcontextlost', () => {
      renderer = null;
      showWithoutWebGL(viewport, 'the WebGL context was lost');
    });
  }
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xdfe6ea);
  const camera = new THREE.PerspectiveCamera(40, 1, sceneRadius * 0.01, sceneRadius * 200);
  camera.up.set(0, 0, 1);
  camera.position.copy(center).add(new THREE.Vector3(1.6, -2.4, 1.1).multiplyScalar(sceneRadius * 0.95));
  const controls = new OrbitControls(camera, renderer ? renderer.domElement : viewport);
  controls.target.copy(center);
  controls.update();
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8a8a80, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.8);
  sun.position.set(0.5, -0.8, 1.5);
  scene.add(sun);

  // Bodies: the world's and other static bodies' shapes, then one group per recorded body.
  const planeSize = Math.max(10, 8 * sceneRadius);
  let planeShape = null;
  const addShapes = (group, modelBody, color) => {
    for (const shape of modelBody.shapes ?? []) {
      const object = buildShape(shape, { planeSize, notes, color });
      if (object.userData.isPlane) {
        planeShape ??= object;
        // The plane is drawn as a finite patch: slide it within its plane to under the scene
        // (planes belong to the world or to static bodies, whose frames are near the world's).
        const normal = new THREE.Vector3(0, 0, 1).applyQuaternion(object.quaternion);
        const offset = center.clone().sub(object.position);
        object.position.add(offset.addScaledVector(normal, -offset.dot(normal)));
      }
      group.add(object);
    }
  };
  if (model) {
    const world = model.bodies[0];
    if (world && !trajectory.bodyNames.includes(world.name)) {
      const group = new THREE.Group();
      scene.add(group);
      addShapes(group, world, bodyColor(0, false));
    }
  }
  const groups = trajectory.bodyNames.map((name, b) => {
    const group = new THREE.Group();
    group.name = name;
    scene.add(group);
    const modelBody = recorded[b];
    const dynamic = !modelBody || modelBody.type !== 'static';
    if (modelBody) addShapes(group, modelBody, bodyColor(b, dynamic));
    else group.add(new THREE.Mesh(new THREE.SphereGeometry(0.05 * sceneRadius, 16, 8),
      new THREE.MeshStandardMaterial({ color: bodyColor(b, true) })));
    return group;
  });

  // Soft bodies: one deforming surface (and spring lines) over all nodes; the soft scene's
  // obstacles: static ones in the world; ones moving with a rigid body (coupled colliders)
  // are that body's shapes, already drawn from the model block, or else attached to its group.
  const softBody = trajectory.soft ? new SoftBody(trajectory.soft, { sceneRadius }) : null;
  if (softBody) {
    softBody.setTimes(times);
    scene.add(softBody.object);
  }
  for (const obstacle of trajectory.soft?.obstacles ?? []) {
    const frame = typeof obstacle.frame === 'string' ? obstacle.frame : null;
    const b = frame === null ? -1 : trajectory.bodyNames.indexOf(frame);
    if (frame !== null && b >= 0 && (recorded[b]?.shapes ?? []).length > 0) continue;
    const object = buildObstacle(obstacle, { planeSize, notes, color: bodyColor(0, false) });
    if (!object) continue;
    if (frame === null) {
      if (object.userData.isPlane) {
        planeShape ??= object;
        const normal = new THREE.Vector3(0, 0, 1).applyQuaternion(object.quaternion);
        const offset = center.clone().sub(object.position);
        object.position.add(offset.addScaledVector(normal, -offset.dot(normal)));
      }
      scene.add(object);
    } else if (b >= 0) {
      groups[b].add(object);
    } else {
      notes.push(`obstacle "${obstacle.name}" moves with frame "${frame}", which this trajectory does not record: not drawn`);
    }
  }

  // Grid cells of a round size, about a tenth of the scene.
  const cell = Math.pow(10, Math.round(Math.log10(sceneRadius / 5)));
  const gridCells = Math.min(400, Math.round(planeSize / cell));
  const grid = new THREE.GridHelper(gridCells * cell, gridCells, 0x9aa39a, 0xb5bcb3);
  grid.rotation.x = Math.PI / 2;  // GridHelper lies in xz; the ground is xy
  if (planeShape) {
    planeShape.updateWorldMatrix(true, false);
    grid.applyMatrix4(planeShape.matrixWorld);
    grid.position.add(new THREE.Vector3(0, 0, 1e-3 * sceneRadius).applyQuaternion(planeShape.getWorldQuaternion(new THREE.Quaternion())));
  } else {
    grid.position.set(center.x, center.y, bounds.min.z);
  }
  scene.add(grid);

  // Joints: a small sphere at each joint anchor (as the child sees it).
  const jointMarkers = new THREE.Group();
  scene.add(jointMarkers);
  const bodyIndex = new Map(trajectory.bodyNames.map((name, b) => [name, b]));
  const joints = (model?.joints ?? []).filter((joint) => bodyIndex.has(joint.child)).map((joint) => {
    const marker = new THREE.Mesh(new THREE.SphereGeometry(0.012 * sceneRadius, 12, 6),
      new THREE.MeshBasicMaterial({ color: 0x222222 }));
    jointMarkers.add(marker);
    return { child: bodyIndex.get(joint.child), anchor: new THREE.Vector3(...vector(joint.anchor_child)), marker };
  });

  // Contacts: points (instanced spheres) and force arrows, from the frame at or before t.
  const maxContacts = Math.max(0, ...trajectory.contacts.map((c) => c.length));
  const contactPoints = new THREE.InstancedMesh(new THREE.SphereGeometry(0.015 * sceneRadius, 10, 6),
    new THREE.MeshBasicMaterial({ color: 0xe0245e }), Math.max(1, maxContacts));
  contactPoints.count = 0;
  contactPoints.frustumCulled = false;
  // Contacts and forces are drawn over the bodies (most of them lie on or inside a surface).
  contactPoints.material.depthTest = false;
  contactPoints.renderOrder = 10;
  scene.add(contactPoints);
  const forceArrows = new THREE.Group();
  scene.add(forceArrows);
  const dt = Number.isFinite(trajectory.dt) && trajectory.dt > 0 ? trajectory.dt : 1;
  // Contact force on body a = (normal impulse · normal + friction impulse) / dt. Arrow
  // lengths are scaled so that the 90th percentile of the forces is a fifth of the scene.
  const forceOf = (contact) => {
    const n = vector(contact.normal), friction = vector(contact.friction_impulse);
    const normalImpulse = Number.isFinite(contact.normal_impulse) ? contact.normal_impulse : 0;
    return new THREE.Vector3(n[0] * normalImpulse + friction[0], n[1] * normalImpulse + friction[1],
      n[2] * normalImpulse + friction[2]).divideScalar(dt);
  };
  const magnitudes = [];
  for (const frameContacts of trajectory.contacts) for (const c of frameContacts) {
    const magnitude = forceOf(c).length();
    if (magnitude > 0) magnitudes.push(magnitude);
  }
  magnitudes.sort((a, b) => a - b);
  // At least the weight of an average dynamic body, so that contacts carrying almost
  // nothing (inside the margin, not yet pressed) do not set the scale.
  const gravity = new THREE.Vector3(...vector(model?.gravity, [0, 0, 0])).length();
  const masses = (model?.bodies ?? []).map((body) => body.mass).filter((m) => Number.isFinite(m) && m > 0);
  const weight = masses.length ? (gravity * masses.reduce((a, b) => a + b, 0)) / masses.length : 0;
  const percentile = magnitudes.length ? magnitudes[Math.floor(0.9 * (magnitudes.length - 1))] : 0;
  const typicalForce = Math.max(percentile, weight) || 1;
  const metresPerNewton = (0.2 * sceneRadius) / typicalForce;
  $('force-scale').textContent = magnitudes.length
    ? `force arrows: 1 m = ${(1 / metresPerNewton).toPrecision(3)} N (on body a of each contact)` : 'no contacts recorded';

  // The body select's entry for the soft body comes after the rigid bodies.
  const softIndex = softBody ? trajectory.bodyNames.length : -1;

  // Playback state.
  let time = startTime;
  let playing = true;
  let speed = 1;
  let dirty = true;
  let followed = 0;
  const scrubber = $('scrubber');
  scrubber.min = String(startTime);
  scrubber.max = String(endTime);
  scrubber.value = String(startTime);

  const poseA = new THREE.Quaternion(), poseB = new THREE.Quaternion();
  const matrix = new THREE.Matrix4();
  const unitScale = new THREE.Vector3(1, 1, 1);
  // What a scene camera saw (diffphys simulate --cameras), beside the 3D view.
  let shownCamera = trajectory.cameras[0] ?? null;
  let cameraFrame = -1;
  if (shownCamera) {
    $('camera-section').hidden = false;
    const cameraSelect = $('camera-select');
    trajectory.cameras.forEach((film, c) => {
      const option = document.createElement('option');
      option.value = String(c);
      option.textContent = `${film.name} (${film.width} × ${film.height})`;
      cameraSelect.appendChild(option);
    });
    cameraSelect.addEventListener('change', () => {
      shownCamera = trajectory.cameras[Number(cameraSelect.value)];
      applyTime();
    });
  }
  function applyTime() {
    const { frame, alpha } = locateTime(times, time);
    const next = Math.min(frame + 1, times.length - 1);
    groups.forEach((group, b) => {
      const p = trajectory.positions[b], q = trajectory.orientations[b];
      group.position.set(
        p[3 * frame] + alpha * (p[3 * next] - p[3 * frame]),
        p[3 * frame + 1] + alpha * (p[3 * next + 1] - p[3 * frame + 1]),
        p[3 * frame + 2] + alpha * (p[3 * next + 2] - p[3 * frame + 2]));
      poseA.set(q[4 * frame + 1], q[4 * frame + 2], q[4 * frame + 3], q[4 * frame]).normalize();
      poseB.set(q[4 * next + 1], q[4 * next + 2], q[4 * next + 3], q[4 * next]).normalize();
      group.quaternion.slerpQuaternions(poseA, poseB, alpha);
      group.visible = Number.isFinite(group.position.x + group.position.y + group.position.z);
    });
    if (softBody) softBody.setTime(frame, next, alpha);
    for (const joint of joints) {
      const group = groups[joint.child];
      joint.marker.position.copy(joint.anchor).applyQuaternion(group.quaternion).add(group.position);
    }
    const frameContacts = trajectory.contacts[frame];
    contactPoints.count = frameContacts.length;
    frameContacts.forEach((contact, k) => {
      matrix.compose(new THREE.Vector3(...vector(contact.position)), new THREE.Quaternion(), unitScale);
      contactPoints.setMatrixAt(k, matrix);
    });
    contactPoints.instanceMatrix.needsUpdate = true;
    while (forceArrows.children.length < frameContacts.length) {
      const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0x1565c0);
      arrow.line.material.depthTest = false;
      arrow.cone.material.depthTest = false;
      arrow.renderOrder = arrow.line.renderOrder = arrow.cone.renderOrder = 11;
      forceArrows.add(arrow);
    }
    forceArrows.children.forEach((arrow, k) => {
      const contact = frameContacts[k];
      const force = contact ? forceOf(contact) : null;
      const length = force ? force.length() * metresPerNewton : 0;
      arrow.visible = length > 1e-6 * sceneRadius;
      if (!arrow.visible) return;
      arrow.position.set(...vector(contact.position));
      arrow.setDirection(force.normalize());
      const shown = Math.min(length, 2 * sceneRadius);
      arrow.setLength(shown, Math.min(0.3 * shown, 0.06 * sceneRadius), Math.min(0.15 * shown, 0.03 * sceneRadius));
    });
    const followedPosition = followed === softIndex ? softBody?.centre() : groups[followed]?.visible ? groups[followed].position : null;
    if ($('follow').checked && followedPosition) {
      const offset = camera.position.clone().sub(controls.target);
      controls.target.copy(followedPosition);
      camera.position.copy(controls.target).add(offset);
      controls.update();
    }
    // The scene camera's frame recorded nearest to this time (frames are pictures: no blending).
    if (shownCamera) {
      cameraFrame = alpha < 0.5 ? frame : next;
      const source = shownCamera.frames[cameraFrame];
      if ($('camera-frame').getAttribute('src') !== source) $('camera-frame').setAttribute('src', source);
    }
    scrubber.value = String(time);
    $('clock').textContent = `t = ${time.toFixed(3)} s / ${endTime.toFixed(3)} s  (frame ${frame + 1}/${times.length})`;
    for (const plot of timePlots) plot.setCursor(time);
    dirty = true;
  }

  // Panel: summary, toggles, plots.
  $('title').textContent = trajectory.name ? `diffphys replay: ${trajectory.name}` : 'diffphys replay';
  document.title = $('title').textContent;
  const count = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const softSummary = trajectory.soft ? `soft "${trajectory.soft.name}": ${count(trajectory.soft.nodeCount, 'node', 'nodes')}, ` +
    `${count(trajectory.soft.triangles.length / 3, 'surface triangle', 'surface triangles')}, ` +
    `${count(trajectory.soft.edges.length / 2, 'spring', 'springs')}; ` : '';
  const bodySummary = trajectory.soft && trajectory.bodyNames.length === 0 ? '' : `${count(trajectory.bodyNames.length, 'body', 'bodies')}, `;
  $('summary').textContent = softSummary + bodySummary +
    `${count(times.length, 'frame', 'frames')} over ${(endTime - startTime).toPrecision(4)} s ` +
    `(dt ${trajectory.dt} s)` + (model ? `, ${count(model.joints?.length ?? 0, 'joint', 'joints')}` : '') +
    `; grid cells ${cell} m`;
  const toggle = (id, object) => {
    const apply = () => { object.visible = $(id).checked; dirty = true; };
    $(id).addEventListener('change', apply);
    apply();
  };
  toggle('show-contacts', contactPoints);
  toggle('show-forces', forceArrows);
  toggle('show-joints', jointMarkers);
  toggle('show-grid', grid);
  if (softBody) toggle('show-soft', softBody.object);
  else $('show-soft-label').hidden = true;
  $('follow').addEventListener('change', () => applyTime());

  const energyPlot = new Plot($('energy-plot'), { xLabel: 't (s)' });
  const positionPlot = new Plot($('position-plot'), { xLabel: 't (s)' });
  const velocityPlot = new Plot($('velocity-plot'), { xLabel: 't (s)' });
  const angularPlot = new Plot($('angular-plot'), { xLabel: 't (s)' });
  const timePlots = [energyPlot, positionPlot, velocityPlot, angularPlot];
  const lossPlot = new Plot($('loss-plot'), { xLabel: 'iteration', logY: true });
  const timeArray = Array.from(times);
  function drawEnergy() {
    if (!trajectory.energy) {
      energyPlot.setSeries([], 'no energies in this trajectory');
      return;
    }
    const { kinetic, potential } = trajectory.energy;
    energyPlot.setSeries([
      { label: 'kinetic', color: '#d9822b', x: timeArray, y: Array.from(kinetic) },
      { label: trajectory.soft ? 'gravity + elastic + contact' : 'potential', color: '#3f7fbf', x: timeArray, y: Array.from(potential) },
      { label: 'total', color: '#222', x: timeArray, y: Array.from(kinetic, (k, f) => k + potential[f]) },
    ]);
  }
  const component = (array, k) => timeArray.map((_, f) => array[3 * f + k]);
  function drawBody() {
    const b = followed;
    const colors = ['#c0392b', '#2e8b57', '#1f5fbf'];
    if (b === softIndex) {
      // The soft body: its nodes' mean position and, by central differences, its velocity.
      positionPlot.setSeries(['x', 'y', 'z'].map((axis, k) => ({
        label: `mean ${axis} (m)`, color: colors[k], x: timeArray, y: component(softBody.centres, k) })));
      velocityPlot.setSeries(['vx', 'vy', 'vz'].map((axis, k) => ({
        label: `mean ${axis} (m/s)`, color: colors[k], x: timeArray, y: component(softBody.centreVelocities, k) })));
      angularPlot.setSeries([], 'no angular velocity for a soft body');
      return;
    }
    positionPlot.setSeries(['x', 'y', 'z'].map((axis, k) => ({
      label: `${axis} (m)`, color: colors[k], x: timeArray, y: component(trajectory.positions[b], k) })));
    velocityPlot.setSeries(['vx', 'vy', 'vz'].map((axis, k) => ({
      label: `${axis} (m/s)`, color: colors[k], x: timeArray, y: component(trajectory.linearVelocities[b], k) })));
    angularPlot.setSeries(['ωx', 'ωy', 'ωz'].map((axis, k) => ({
      label: `${axis} (rad/s)`, color: colors[k], x: timeArray, y: component(trajectory.angularVelocities[b], k) })));
  }
  function drawLoss() {
    if (!trajectory.loss || trajectory.loss.length === 0) return;
    $('loss-section').hidden = false;
    lossPlot.setSeries([{ label: 'loss', color: '#8e44ad', x: trajectory.loss.map((_, i) => i), y: trajectory.loss }]);
  }
  const select = $('body-select');
  trajectory.bodyNames.forEach((name, b) => {
    const option = document.createElement('option');
    option.value = String(b);
    const type = recorded[b]?.type;
    option.textContent = name + (type === 'static' || type === 'kinematic' ? ` (${type})` : '');
    select.appendChild(option);
  });
  if (softBody) {
    const option = document.createElement('option');
    option.value = String(softIndex);
    option.textContent = `soft "${trajectory.soft.name}" (mean of its nodes)`;
    select.appendChild(option);
  }
  // Start with the soft body if there is one, else the first dynamic body.
  followed = softBody ? softIndex : Math.max(0, recorded.findIndex((body) => !body || body.type !== 'static'));
  select.value = String(followed);
  select.addEventListener('change', () => { followed = Number(select.value); drawBody(); applyTime(); });
  const drawPlots = () => { drawEnergy(); drawBody(); drawLoss(); for (const plot of timePlots) plot.setCursor(time); };
  drawPlots();

  const noteList = $('notes');
  for (const note of new Set(notes)) {
    const item = document.createElement('li');
    item.textContent = note;
    noteList.appendChild(item);
  }

  // Playback controls.
  const playButton = $('play');
  const setPlaying = (value) => {
    playing = value;
    playButton.textContent = playing ? 'Pause' : 'Play';
    playButton.setAttribute('aria-pressed', String(playing));
  };
  playButton.addEventListener('click', () => {
    if (!playing && time >= endTime) time = startTime;
    setPlaying(!playing);
  });
  $('speed').addEventListener('change', (event) => { speed = Number(event.target.value); });
  scrubber.addEventListener('input', () => {
    setPlaying(false);
    time = Math.min(endTime, Math.max(startTime, Number(scrubber.value)));
    applyTime();
  });
  window.addEventListener('keydown', (event) => {
    if (event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement && event.target.type !== 'range' && event.target.type !== 'checkbox') return;
    if (event.code === 'Space') { event.preventDefault(); playButton.click(); }
    if (event.code === 'ArrowRight' || event.code === 'ArrowLeft') {
      event.preventDefault();
      setPlaying(false);
      const { frame } = locateTime(times, time);
      const target = event.code === 'ArrowRight' ? Math.min(frame + 1, times.length - 1) : Math.max(0, frame - (time > times[frame] ? 0 : 1));
      time = times[target];
      applyTime();
    }
  });
  controls.addEventListener('change', () => { dirty = true; });

  function resize() {
    const width = Math.max(1, viewport.clientWidth), height = Math.max(1, viewport.clientHeight);
    renderer?.setSize(width, height, false);
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
    dirty = true;
  }
  new ResizeObserver(() => { resize(); drawPlots(); }).observe(viewport);
  resize();

  let lastWall = null;
  let framesRendered = 0;
  function animate(wall) {
    if (playing && lastWall !== null) {
      time += ((wall - lastWall) / 1000) * speed;
      if (time > endTime) time = startTime + (time - endTime) % Math.max(endTime - startTime, 1e-9);
      applyTime();
    }
    lastWall = wall;
    if (dirty && renderer) {
      renderer.render(scene, camera);
      ++framesRendered;
      dirty = false;
    }
    requestAnimationFrame(animate);
  }
  applyTime();
  requestAnimationFrame(animate);

  // For scripts and the browser test (viewer/test/viewer.test.mjs).
  window.diffphysViewer = {
    ready: true,
    startTime, endTime,
    frameCount: times.length,
    notes: [...new Set(notes)],
    get time() { return time; },
    get playing() { return playing; },
    get framesRendered() { return framesRendered; },
    // The scene camera shown beside the 3D view and the recorded frame it shows (-1: none).
    get camera() { return shownCamera ? { name: shownCamera.name, frame: cameraFrame } : null; },
    // The soft mesh as drawn now: node count, surface triangles, springs, node i's position.
    soft: softBody ? {
      nodeCount: trajectory.soft.nodeCount,
      triangleCount: trajectory.soft.triangles.length / 3,
      edgeCount: trajectory.soft.edges.length / 2,
      get visible() { return softBody.object.visible; },
      nodePosition(i) { return softBody.nodePosition(i); },
    } : null,
    get webgl() { return renderer !== null; },
    renderNow() {
      if (!renderer) return;
      renderer.render(scene, camera);
      ++framesRendered;
    },
  };
}

try {
  start();
} catch (error) {
  showFatal(error);
}
