// viewer/src/trajectory.js — reads the trajectory JSON that `diffphys simulate --out` writes
// (docs/scene-format.md, "Trajectory files"; soft files: docs/soft-bodies.md) into flat typed
// arrays per body and per soft node, checks its shape (a malformed file gives a message naming
// the key, not a blank page), and samples a pose at any time between two recorded frames. A
// world of several parts ("diffphys-world-trajectory") holds each part's own document under
// "parts"; PART_READERS below is the one table of the kinds of parts the page reads.

function fail(message) {
  throw new Error(`trajectory: ${message}`);
}

function isVector(value, length) {
  return Array.isArray(value) && value.length === length && value.every((v) => v === null || typeof v === 'number');
}

// Returns { name, dt, bodyNames, model, loss, times, positions[b], orientations[b],
// linearVelocities[b], angularVelocities[b], contacts[f], energy: {kinetic, potential} | null,
// solver: {nonConverged}, soft: null | {...} (readSoftTrajectory), cameras: [{name, width,
// height, frames}] (readCameras) }. Positions etc. are
// Float64Array(frames × 3 or 4); null → NaN.
export function readTrajectory(data) {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) fail('expected a JSON object');
  const result = readParts(data);
  result.cameras = readCameras(data.cameras, result.times.length);
  return result;
}

// "cameras" (diffphys simulate --cameras): what each scene camera saw at every recorded frame,
// [{name, width, height, frames: [PNG data URI, …]}]; [] when the file has none.
function readCameras(cameras, frameCount) {
  if (cameras === undefined) return [];
  if (!Array.isArray(cameras)) fail('"cameras" must be a list of the cameras\' films');
  return cameras.map((camera, i) => {
    const where = `cameras[${i}]`;
    if (!camera || typeof camera !== 'object' || typeof camera.name !== 'string') fail(`${where}: expected {name, width, height, frames}`);
    if (!Number.isInteger(camera.width) || !Number.isInteger(camera.height) || camera.width < 1 || camera.height < 1)
      fail(`${where}: width and height must be positive integers`);
    if (!Array.isArray(camera.frames) || camera.frames.length !== frameCount)
      fail(`${where}: ${Array.isArray(camera.frames) ? camera.frames.length : 'no'} frames, the trajectory has ${frameCount}`);
    camera.frames.forEach((frame, f) => {
      if (typeof frame !== 'string' || !frame.startsWith('data:image/png;base64,'))
        fail(`${where}.frames[${f}]: expected a PNG data URI`);
    });
    return { name: camera.name, width: camera.width, height: camera.height, frames: camera.frames };
  });
}

function readParts(data) {
  if (data.format === 'diffphys-world-trajectory') return readWorldTrajectory(data);
  if (data.format === 'diffphys-coupled-trajectory')
    fail('a coupled trajectory of an earlier diffphys; write it again with this version of \'diffphys simulate --out\' ' +
      '(a world of several parts is now a "diffphys-world-trajectory")');
  const kind = Object.keys(PART_READERS).find((k) => PART_READERS[k].format === data.format);
  if (kind === undefined)
    fail(`"format" is ${JSON.stringify(data.format)}, expected "diffphys-trajectory", "diffphys-soft-trajectory" or "diffphys-world-trajectory"`);
  return PART_READERS[kind].read(data);
}

// A world of several parts: each part's document read by its reader, then joined (the rigid
// bodies and the soft body drawn together, their energies summed), frame by frame.
function readWorldTrajectory(data) {
  if (data.version !== undefined && data.version !== 1) fail(`"version" is ${JSON.stringify(data.version)}, expected 1`);
  const parts = data.parts;
  if (!parts || typeof parts !== 'object' || Array.isArray(parts) || Object.keys(parts).length === 0)
    fail('"parts" must be an object holding each part\'s trajectory ("rigid", "soft")');
  let result = null;
  for (const [kind, document] of Object.entries(parts)) {
    const reader = PART_READERS[kind];
    if (!reader) fail(`parts.${kind}: unknown kind of part (this page shows ${Object.keys(PART_READERS).join(', ')})`);
    if (!document || typeof document !== 'object' || document.format !== reader.format)
      fail(`parts.${kind}: expected a "${reader.format}" document`);
    let part;
    try {
      part = reader.read(document);
    } catch (error) {
      throw new Error(String(error.message).replace(/^trajectory: /, `trajectory: parts.${kind}: `));
    }
    if (result && part.times.length !== result.times.length)
      fail(`parts.${kind}: ${part.times.length} frames, but the parts before it have ${result.times.length}`);
    result = result ? reader.join(result, part) : part;
  }
  result.name = typeof data.name === 'string' ? data.name : result.name;
  result.dt = typeof data.dt === 'number' ? data.dt : result.dt;
  return result;
}

// Energies of two parts, summed frame by frame (null unless both have them).
function sumEnergies(a, b) {
  if (!a || !b) return a ?? b;
  return {
    kinetic: a.kinetic.map((v, f) => v + b.kinetic[f]),
    potential: a.potential.map((v, f) => v + b.potential[f]),
  };
}

function readRigidTrajectory(data) {
  if (!Array.isArray(data.bodies)) fail('"bodies" must be an array of body names');
  if (!Array.isArray(data.frames) || data.frames.length === 0) fail('"frames" must be a non-empty array');
  const bodyCount = data.bodies.length;
  const frameCount = data.frames.length;
  const times = new Float64Array(frameCount);
  const positions = [], orientations = [], linearVelocities = [], angularVelocities = [];
  for (let b = 0; b < bodyCount; ++b) {
    positions.push(new Float64Array(frameCount * 3));
    orientations.push(new Float64Array(frameCount * 4));
    linearVelocities.push(new Float64Array(frameCount * 3));
    angularVelocities.push(new Float64Array(frameCount * 3));
  }
  const contacts = new Array(frameCount);
  const hasEnergy = data.frames.every((frame) => frame && typeof frame.energy === 'object' && frame.energy !== null);
  const kinetic = hasEnergy ? new Float64Array(frameCount) : null;
  const potential = hasEnergy ? new Float64Array(frameCount) : null;
  let nonConverged = 0;
  const number = (v) => (typeof v === 'number' ? v : NaN);
  for (let f = 0; f < frameCount; ++f) {
    const frame = data.frames[f];
    if (!frame || typeof frame.time !== 'number') fail(`frames[${f}].time must be a number`);
    if (f > 0 && frame.time < times[f - 1]) fail(`frames[${f}].time ${frame.time} goes back in time`);
    times[f] = frame.time;
    if (!Array.isArray(frame.bodies) || frame.bodies.length !== bodyCount)
      fail(`frames[${f}].bodies must have ${bodyCount} entries (one per name in "bodies")`);
    for (let b = 0; b < bodyCount; ++b) {
      const body = frame.bodies[b];
      const where = `frames[${f}].bodies[${b}]`;
      if (!body || !isVector(body.position, 3) || !isVector(body.orientation, 4))
        fail(`${where} needs "position" [x, y, z] and "orientation" [w, x, y, z]`);
      for (let k = 0; k < 3; ++k) positions[b][3 * f + k] = number(body.position[k]);
      for (let k = 0; k < 4; ++k) orientations[b][4 * f + k] = number(body.orientation[k]);
      for (let k = 0; k < 3; ++k) {
        linearVelocities[b][3 * f + k] = isVector(body.linear_velocity, 3) ? number(body.linear_velocity[k]) : NaN;
        angularVelocities[b][3 * f + k] = isVector(body.angular_velocity, 3) ? number(body.angular_velocity[k]) : NaN;
      }
    }
    const frameContacts = Array.isArray(frame.contacts) ? frame.contacts : [];
    contacts[f] = frameContacts.filter((c) => c && isVector(c.position, 3));
    if (hasEnergy) {
      kinetic[f] = number(frame.energy.kinetic);
      potential[f] = number(frame.energy.potential);
    }
    if (frame.solver && frame.solver.converged === false) ++nonConverged;
  }
  const loss = Array.isArray(data.loss) ? data.loss.map(number) : null;
  const model = data.model && typeof data.model === 'object' && Array.isArray(data.model.bodies) ? data.model : null;
  return {
    name: typeof data.name === 'string' ? data.name : '',
    dt: typeof data.dt === 'number' ? data.dt : NaN,
    bodyNames: data.bodies.map(String),
    model, loss, times, positions, orientations, linearVelocities, angularVelocities, contacts,
    energy: hasEnergy ? { kinetic, potential } : null,
    solver: { nonConverged },
    soft: null,
  };
}

// Node indices of a topology list (`width` per item) as one Uint32Array.
function indexList(items, key, width, nodeCount) {
  if (items === undefined) return new Uint32Array(0);
  if (!Array.isArray(items)) fail(`topology.${key} must be an array`);
  const flat = new Uint32Array(items.length * width);
  items.forEach((item, i) => {
    if (!Array.isArray(item) || item.length !== width || !item.every((n) => Number.isInteger(n) && n >= 0 && n < nodeCount))
      fail(`topology.${key}[${i}] must be ${width} node indices in [0, ${nodeCount})`);
    flat.set(item, i * width);
  });
  return flat;
}

// A soft part's document ("diffphys-soft-trajectory"), in the shape of readTrajectory's result
// with no rigid bodies, plus soft: {name, nodeCount, positions: Float64Array(frames × 3
// nodeCount), triangles: Uint32Array(3 per surface triangle), edges: Uint32Array(2 per spring),
// obstacles: [...] as written (docs/soft-bodies.md, "Trajectory files")}.
function readSoftTrajectory(data) {
  const nodeCount = data.node_count;
  if (!Number.isInteger(nodeCount) || nodeCount < 1) fail('"node_count" must be a positive integer');
  const topology = data.topology;
  if (!topology || typeof topology !== 'object')
    fail('"topology" is missing (surface triangles and spring edges); write the trajectory again with this version of diffphys');
  const triangles = indexList(topology.surface_triangles, 'surface_triangles', 3, nodeCount);
  const edges = indexList(topology.edges, 'edges', 2, nodeCount);
  if (!Array.isArray(data.frames) || data.frames.length === 0) fail('"frames" must be a non-empty array');
  const frameCount = data.frames.length;
  const times = new Float64Array(frameCount);
  const nodes = new Float64Array(frameCount * 3 * nodeCount);
  const number = (v) => (typeof v === 'number' ? v : NaN);
  let nonConverged = 0;
  for (let f = 0; f < frameCount; ++f) {
    const frame = data.frames[f];
    if (!frame || typeof frame.time !== 'number') fail(`frames[${f}].time must be a number`);
    if (f > 0 && frame.time < times[f - 1]) fail(`frames[${f}].time ${frame.time} goes back in time`);
    times[f] = frame.time;
    if (!isVector(frame.positions, 3 * nodeCount)) fail(`frames[${f}].positions must be ${3 * nodeCount} numbers`);
    for (let k = 0; k < 3 * nodeCount; ++k) nodes[3 * nodeCount * f + k] = number(frame.positions[k]);
    if (frame.converged === false) ++nonConverged;
  }
  // Soft files' energies: kinetic, and gravity + elastic + contact as the potential.
  const hasEnergy = data.frames.every((frame) => frame && typeof frame.energy === 'object' && frame.energy !== null);
  const energy = hasEnergy ? {
    kinetic: Float64Array.from(data.frames, (frame) => number(frame.energy.kinetic)),
    potential: Float64Array.from(data.frames, (frame) => number(frame.energy.gravity) + number(frame.energy.elastic) +
      number(frame.energy.contact)),
  } : null;
  const softName = typeof data.model === 'string' ? data.model : '';
  return {
    name: softName,
    dt: typeof data.dt === 'number' ? data.dt : NaN,
    bodyNames: [], model: null, loss: null, times, positions: [], orientations: [], linearVelocities: [], angularVelocities: [],
    contacts: Array.from({ length: frameCount }, () => []),
    energy,
    solver: { nonConverged },
    soft: {
      name: softName, nodeCount, positions: nodes, triangles, edges,
      obstacles: Array.isArray(data.obstacles) ? data.obstacles.filter((o) => o && typeof o === 'object') : [],
    },
  };
}

// The kinds of parts this page reads: each part's document format, its reader, and how it
// joins the parts read before it in a world's file. A part that joins the world adds its entry
// here (and its drawing to main.js).
const PART_READERS = {
  rigid: {
    format: 'diffphys-trajectory',
    read: readRigidTrajectory,
    join: (world, rigid) => ({ ...rigid, soft: world.soft, energy: sumEnergies(rigid.energy, world.energy),
      solver: { nonConverged: rigid.solver.nonConverged + world.solver.nonConverged } }),
  },
  soft: {
    format: 'diffphys-soft-trajectory',
    read: readSoftTrajectory,
    join: (world, soft) => ({ ...world, soft: soft.soft, energy: sumEnergies(world.energy, soft.energy),
      solver: { nonConverged: world.solver.nonConverged + soft.solver.nonConverged } }),
  },
};

// The frame at or before `time` and the fraction of the way to the next one.
export function locateTime(times, time) {
  const last = times.length - 1;
  if (!(time > times[0])) return { frame: 0, alpha: 0 };
  if (time >= times[last]) return { frame: last, alpha: 0 };
  let low = 0, high = last;  // times[low] <= time < times[high]
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (times[middle] <= time) low = middle; else high = middle;
  }
  const span = times[high] - times[low];
  return { frame: low, alpha: span > 0 ? (time - times[low]) / span : 0 };
}
