#!/usr/bin/env python3
"""Writes the collision meshes of urdf/go1.urdf (a test fixture, not Unitree's meshes).

Unitree's go1_description ships detailed visual meshes and collides with primitives; these
files stand in for its collision primitives, as meshes, at the sizes of its const.xacro
(unitree_ros, robots/go1_description/xacro/const.xacro), so that the URDF exercises
package:// mesh paths, OBJ and both kinds of STL, and hull faces of more than 32 vertices:

  meshes/trunk.stl  binary STL  box 0.3762 x 0.0935 x 0.114 m (trunk_length, _width, _height)
  meshes/hip.obj    OBJ         cylinder r 0.046 m, length 0.04 m (hip_radius, hip_length),
                                48 segments around z: its caps have 48 vertices
  meshes/thigh.obj  OBJ         box 0.213 x 0.0245 x 0.034 m (thigh_length, _width, _height)
  meshes/calf.stl   ASCII STL   box 0.213 x 0.016 x 0.016 m (calf_length, _width, _height)

Run from this directory: python3 make_meshes.py
"""
import math
import struct


def box_triangles(sx, sy, sz):
    hx, hy, hz = sx / 2, sy / 2, sz / 2
    corner = lambda i: ((hx if i & 1 else -hx), (hy if i & 2 else -hy), (hz if i & 4 else -hz))
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    triangles = []
    for a, b, c, d in quads:
        triangles += [(corner(a), corner(b), corner(c)), (corner(a), corner(c), corner(d))]
    return triangles


def write_binary_stl(path, triangles):
    with open(path, "wb") as f:
        f.write(b"go1 collision mesh (diffphys test fixture)".ljust(80, b" "))
        f.write(struct.pack("<I", len(triangles)))
        for triangle in triangles:
            f.write(struct.pack("<3f", 0.0, 0.0, 0.0))
            for vertex in triangle:
                f.write(struct.pack("<3f", *vertex))
            f.write(struct.pack("<H", 0))


def write_ascii_stl(path, triangles):
    with open(path, "w") as f:
        f.write("solid calf\n")
        for triangle in triangles:
            f.write("  facet normal 0 0 0\n    outer loop\n")
            for x, y, z in triangle:
                f.write(f"      vertex {x:.6f} {y:.6f} {z:.6f}\n")
            f.write("    endloop\n  endfacet\n")
        f.write("endsolid calf\n")


def write_box_obj(path, sx, sy, sz):
    with open(path, "w") as f:
        f.write("# go1 collision mesh (diffphys test fixture)\n")
        for i in range(8):
            f.write(f"v {sx / 2 if i & 1 else -sx / 2:.6f} {sy / 2 if i & 2 else -sy / 2:.6f} "
                    f"{sz / 2 if i & 4 else -sz / 2:.6f}\n")
        for quad in [(1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)]:
            f.write("f " + " ".join(map(str, quad)) + "\n")


def write_cylinder_obj(path, radius, length, segments):
    with open(path, "w") as f:
        f.write(f"# go1 collision mesh (diffphys test fixture): cylinder, {segments} segments\n")
        for z in (-length / 2, length / 2):
            for k in range(segments):
                angle = 2 * math.pi * k / segments
                f.write(f"v {radius * math.cos(angle):.6f} {radius * math.sin(angle):.6f} {z:.6f}\n")
        f.write("f " + " ".join(str(k) for k in range(segments, 0, -1)) + "\n")
        f.write("f " + " ".join(str(segments + k) for k in range(1, segments + 1)) + "\n")
        for k in range(1, segments + 1):
            n = k % segments + 1
            f.write(f"f {k} {n} {segments + n} {segments + k}\n")


write_binary_stl("meshes/trunk.stl", box_triangles(0.3762, 0.0935, 0.114))
write_cylinder_obj("meshes/hip.obj", 0.046, 0.04, 48)
write_box_obj("meshes/thigh.obj", 0.213, 0.0245, 0.034)
write_ascii_stl("meshes/calf.stl", box_triangles(0.213, 0.016, 0.016))
