// viewer/src/softbody.js — soft bodies in the replay page: the soft mesh of a soft or coupled
// trajectory as one deforming surface (its "surface_triangles": cloth triangles and the
// boundary faces of tet meshes) plus its springs as line segments, both drawn from one
// position buffer rewritten each frame; and the soft scene's rigid obstacles (plane, sphere,
// box, capsule) as three.js objects (docs/viewer.md, docs/soft-bodies.md).
import * as THREE from 'three';
import { buildShape, vector } from './scene.js';

const SOFT_COLOR = 0xe0a030;

export class SoftBody {
  // soft: readTrajectory(...).soft; context: { sceneRadius }.
  constructor(soft, context) {
    this.soft = soft;
    const n = soft.nodeCount;
    this.frameCount = soft.positions.length / (3 * n);
    this.object = new THREE.Group();
    this.object.name = 'soft';
    // One position buffer shared by the surface, the springs and (with neither) the nodes.
    this.positionAttribute = new THREE.BufferAttribute(new Float32Array(3 * n), 3);
    this.positionAttribute.setUsage(THREE.DynamicDrawUsage);
    this.surface = null;
    if (soft.triangles.length > 0) {
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', this.positionAttribute);
      geometry.setIndex(new THREE.BufferAttribute(soft.triangles, 1));
      // Cloth is seen from both sides; flat-ish shading from per-frame vertex normals.
      this.surface = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({
        color: SOFT_COLOR, roughness: 0.7, metalness: 0.0, side: THREE.DoubleSide }));
      this.surface.frustumCulled = false;  // the mesh moves; its bounds are not kept current
      this.object.add(this.surface);
      // The mesh's edges, darker, so that the deformation reads on a flat surface.
      const wire = new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({
        color: 0x6b4a10, wireframe: true, transparent: true, opacity: 0.35 }));
      wire.frustumCulled = false;
      this.object.add(wire);
    }
    if (soft.edges.length > 0) {
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', this.positionAttribute);
      geometry.setIndex(new THREE.BufferAttribute(soft.edges, 1));
      const lines = new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ color: 0x7a3e00 }));
      lines.frustumCulled = false;
      this.object.add(lines);
    }
    // Nodes as small spheres when there is no surface: with the springs when there are not too
    // many of them (mass-spring scenes), always when there are no springs either.
    this.nodes = null;
    if (soft.triangles.length === 0 && (n <= 200 || soft.edges.length === 0)) {
      this.nodes = new THREE.InstancedMesh(new THREE.SphereGeometry(0.012 * context.sceneRadius, 10, 6),
        new THREE.MeshStandardMaterial({ color: 0x7a3e00 }), n);
      this.nodes.frustumCulled = false;
      this.object.add(this.nodes);
    }
    // Mean node position per frame and its central-difference velocity, for the plots.
    this.centres = new Float64Array(3 * this.frameCount);
    for (let f = 0; f < this.frameCount; ++f) {
      for (let i = 0; i < n; ++i)
        for (let k = 0; k < 3; ++k) this.centres[3 * f + k] += soft.positions[3 * (n * f + i) + k] / n;
    }
    this.times = null;
    this.centreVelocities = new Float64Array(3 * this.frameCount).fill(NaN);
    this.matrix = new THREE.Matrix4();
    this.current = new THREE.Vector3();
  }

  // Central differences of the mean node position over the recorded times.
  setTimes(times) {
    for (let f = 0; f < this.frameCount; ++f) {
      const a = Math.max(0, f - 1), b = Math.min(this.frameCount - 1, f + 1);
      const span = times[b] - times[a];
      for (let k = 0; k < 3; ++k)
        this.centreVelocities[3 * f + k] = span > 0 ? (this.centres[3 * b + k] - this.centres[3 * a + k]) / span : NaN;
    }
  }

  // Node positions between recorded frames `frame` and `next` (fraction alpha).
  setTime(frame, next, alpha) {
    const n = this.soft.nodeCount;
    const p = this.soft.positions, out = this.positionAttribute.array;
    const a = 3 * n * frame, b = 3 * n * next;
    for (let k = 0; k < 3 * n; ++k) out[k] = p[a + k] + alpha * (p[b + k] - p[a + k]);
    this.positionAttribute.needsUpdate = true;
    if (this.surface) this.surface.geometry.computeVertexNormals();
    if (this.nodes) {
      for (let i = 0; i < n; ++i) {
        this.matrix.makeTranslation(out[3 * i], out[3 * i + 1], out[3 * i + 2]);
        this.nodes.setMatrixAt(i, this.matrix);
      }
      this.nodes.instanceMatrix.needsUpdate = true;
    }
    this.current.set(0, 0, 0);
    for (let i = 0; i < n; ++i) this.current.x += out[3 * i] / n, this.current.y += out[3 * i + 1] / n, this.current.z += out[3 * i + 2] / n;
  }

  // The mean node position as drawn now.
  centre() { return this.current; }

  nodePosition(i) {
    const out = this.positionAttribute.array;
    return [out[3 * i], out[3 * i + 1], out[3 * i + 2]];
  }
}

// [r00 … r22] row-major (shape → parent) as a quaternion; identity when missing.
function rotationQuaternion(rotation) {
  if (!Array.isArray(rotation) || rotation.length !== 9 || !rotation.every(Number.isFinite)) return new THREE.Quaternion();
  const r = rotation;
  const m = new THREE.Matrix4().set(r[0], r[1], r[2], 0, r[3], r[4], r[5], 0, r[6], r[7], r[8], 0, 0, 0, 0, 1);
  return new THREE.Quaternion().setFromRotationMatrix(m);
}

// An obstacle of a soft trajectory's "obstacles" block as a three.js object in its parent
// frame (the world, or the rigid body it moves with), or null. context as for buildShape.
export function buildObstacle(obstacle, context) {
  const type = obstacle.type;
  let shape;
  switch (type) {
    case 'plane': shape = { type: 'plane' }; break;
    case 'sphere': shape = { type: 'sphere', radius: obstacle.radius }; break;
    case 'box': shape = { type: 'box', half_extents: obstacle.half_extents }; break;
    case 'capsule': shape = { type: 'capsule', radius: obstacle.radius, half_length: obstacle.half_length }; break;
    default: shape = { type: String(type), radius: obstacle.radius, half_extents: obstacle.half_extents }; break;
  }
  shape.name = obstacle.name;
  const object = buildShape(shape, context);
  object.position.set(...vector(obstacle.point));
  if (type === 'plane') {
    const normal = new THREE.Vector3(...vector(obstacle.normal, [0, 0, 1]));
    if (normal.lengthSq() > 0) object.quaternion.setFromUnitVectors(new THREE.Vector3(0, 0, 1), normal.normalize());
  } else {
    object.quaternion.copy(rotationQuaternion(obstacle.rotation));
  }
  return object;
}
