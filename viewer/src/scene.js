// viewer/src/scene.js — three.js objects for the model block of a trajectory: one Group
// per body (placed at the recorded centre of mass and orientation each frame) holding its
// shapes at their local poses. Sphere, box, capsule and plane follow the scene format's
// frames (docs/scene-format.md, "Shapes"); a "mesh" ("vertices" at scale 1 times "scale",
// optional "faces" as polygons of vertex indices) is drawn by its faces, or as the convex
// hull of its vertices; any other type is drawn as its bounding box, in wireframe, and
// named in the page's notes.
import * as THREE from 'three';
import { ConvexGeometry } from 'three/addons/geometries/ConvexGeometry.js';

const PALETTE = [0x3f7fbf, 0xd9822b, 0x4caf50, 0xc0392b, 0x8e6cbf, 0x16a2a2, 0xc2a000, 0xd36fa8];

export function vector(value, fallback = [0, 0, 0]) {
  return Array.isArray(value) && value.length === 3 && value.every(Number.isFinite) ? value : fallback;
}

function quaternion(value) {
  // [w, x, y, z] → THREE.Quaternion(x, y, z, w)
  if (!Array.isArray(value) || value.length !== 4 || !value.every(Number.isFinite)) return new THREE.Quaternion();
  return new THREE.Quaternion(value[1], value[2], value[3], value[0]).normalize();
}

function positiveNumber(value) {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null;
}

// Half extents of the box around a shape in its own frame, or null for an unbounded plane.
export function shapeHalfExtents(shape) {
  const radius = positiveNumber(shape.radius);
  switch (shape.type) {
    case 'sphere': return radius ? [radius, radius, radius] : null;
    case 'box': return Array.isArray(shape.half_extents) ? vector(shape.half_extents, null) : null;
    case 'ellipsoid': return Array.isArray(shape.radii) ? vector(shape.radii, null) : null;
    case 'capsule': {
      const halfLength = positiveNumber(shape.half_length) ?? 0;
      return radius ? [radius, radius, radius + halfLength] : null;
    }
    case 'cylinder': {
      const halfLength = positiveNumber(shape.half_length) ?? 0;
      return radius ? [radius, radius, halfLength] : null;
    }
    case 'plane': return null;
    default: break;
  }
  // A mesh, or a shape type this viewer does not know: whatever size keys it has.
  if (Array.isArray(shape.vertices) && shape.vertices.length > 0) {
    const scale = meshScale(shape);
    const extent = [0, 0, 0];
    for (const v of shape.vertices) for (let k = 0; k < 3; ++k) extent[k] = Math.max(extent[k], scale * Math.abs(Number(v[k]) || 0));
    return extent;
  }
  if (Array.isArray(shape.half_extents)) return vector(shape.half_extents, null);
  if (radius) {
    const halfLength = positiveNumber(shape.half_length) ?? 0;
    return [radius, radius, radius + halfLength];
  }
  return null;
}

// Radius of the sphere about the body origin that holds every bounded shape.
export function bodyRadius(modelBody) {
  let radius = 0;
  for (const shape of modelBody?.shapes ?? []) {
    const half = shapeHalfExtents(shape);
    if (!half) continue;
    const offset = new THREE.Vector3(...vector(shape.position)).length();
    radius = Math.max(radius, offset + Math.hypot(half[0], half[1], half[2]));
  }
  return radius;
}

// A mesh's uniform "scale" (its size parameter; the vertices are at scale 1), default 1.
function meshScale(shape) {
  return positiveNumber(shape.scale) ?? 1;
}

function meshGeometry(shape) {
  const scale = meshScale(shape);
  const points = shape.vertices.filter((v) => Array.isArray(v) && v.length === 3 && v.every(Number.isFinite))
    .map((v) => new THREE.Vector3(v[0], v[1], v[2]).multiplyScalar(scale));
  if (Array.isArray(shape.faces) && shape.faces.length > 0) {
    const geometry = new THREE.BufferGeometry();
    geometry.setFromPoints(points);
    const indices = [];
    for (const face of shape.faces) {
      // A polygon (3 or more vertex indices, counter-clockwise seen from outside): a fan.
      if (!Array.isArray(face)) continue;
      for (let k = 1; k + 1 < face.length; ++k) indices.push(face[0], face[k], face[k + 1]);
    }
    geometry.setIndex(indices);
    const flat = geometry.toNonIndexed();  // flat shading: one normal per face
    flat.computeVertexNormals();
    return flat;
  }
  if (points.length < 4) return null;
  return new ConvexGeometry(points);
}

// Object3D for one shape at its local pose, or null when nothing can be drawn.
// `context`: { planeSize, notes: string[], color }.
export function buildShape(shape, context) {
  const material = new THREE.MeshStandardMaterial({ color: context.color, roughness: 0.6, metalness: 0.05 });
  let object = null;
  const radius = positiveNumber(shape.radius);
  switch (shape.type) {
    case 'sphere':
      if (radius) object = new THREE.Mesh(new THREE.SphereGeometry(radius, 32, 16), material);
      break;
    case 'box': {
      const half = shapeHalfExtents(shape);
      if (half) object = new THREE.Mesh(new THREE.BoxGeometry(2 * half[0], 2 * half[1], 2 * half[2]), material);
      break;
    }
    case 'ellipsoid': {
      // A unit sphere scaled by the semi-axes along the shape's x, y, z.
      const radii = shapeHalfExtents(shape);
      if (radii) {
        const geometry = new THREE.SphereGeometry(1, 32, 16);
        geometry.scale(radii[0], radii[1], radii[2]);
        object = new THREE.Mesh(geometry, material);
      }
      break;
    }
    case 'capsule':
      if (radius) {
        // three's capsule runs along y; the scene format's along z.
        const geometry = new THREE.CapsuleGeometry(radius, 2 * (positiveNumber(shape.half_length) ?? 0), 8, 24);
        geometry.rotateX(Math.PI / 2);
        object = new THREE.Mesh(geometry, material);
      }
      break;
    case 'cylinder':
      if (radius) {
        // three's cylinder runs along y; the scene format's along z.
        const geometry = new THREE.CylinderGeometry(radius, radius, 2 * (positiveNumber(shape.half_length) ?? 0), 24);
        geometry.rotateX(Math.PI / 2);
        object = new THREE.Mesh(geometry, material);
      }
      break;
    case 'plane': {
      const geometry = new THREE.PlaneGeometry(context.planeSize, context.planeSize);  // normal +z
      const ground = new THREE.MeshStandardMaterial({ color: 0xc9cfc4, roughness: 0.95, side: THREE.DoubleSide });
      object = new THREE.Mesh(geometry, ground);
      object.userData.isPlane = true;
      break;
    }
    default:
      if (shape.type === 'mesh' && Array.isArray(shape.vertices)) {
        const geometry = meshGeometry(shape);
        if (geometry) object = new THREE.Mesh(geometry, material);
      }
      break;
  }
  if (!object) {
    const half = shapeHalfExtents(shape) ?? [0.05, 0.05, 0.05];
    const box = new THREE.BoxGeometry(2 * half[0], 2 * half[1], 2 * half[2]);
    object = new THREE.LineSegments(new THREE.EdgesGeometry(box), new THREE.LineBasicMaterial({ color: context.color }));
    context.notes.push(`shape "${shape.name}" of type "${shape.type}" is not drawn by this viewer: ` +
      'its bounding box is shown instead');
  }
  object.name = String(shape.name ?? '');
  object.position.set(...vector(shape.position));
  object.quaternion.copy(quaternion(shape.orientation));
  return object;
}

export function bodyColor(index, dynamic) {
  return dynamic ? PALETTE[index % PALETTE.length] : 0x8d8d8d;
}

export { quaternion as toQuaternion };
