// The 3-D view of an artefact (see buildbench/web/artefacts/__init__.py for its JSON form).
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";

const UNIT_BOX = new THREE.BoxGeometry(1, 1, 1);
const UNIT_EDGES = new THREE.EdgesGeometry(UNIT_BOX);
const TRANSLUCENT = { context: 0.35, wall: 0.25, opening: 0.45, removed: 0.45, terrain: 0.8, floor: 0.9 };
const MAX_EDGED_BOXES = 1500;

export class ArtefactView {
  constructor(container, artefact, { onPick } = {}) {
    this.artefact = artefact;
    this.onPick = onPick;
    this.objects = new Map(); // element id -> [Object3D]
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.renderer.setClearColor(0xf4f5f7);
    this.canvas = this.renderer.domElement;
    this.canvas.className = "artefact-canvas";
    container.appendChild(this.canvas);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 10000);
    this.controls = new OrbitControls(this.camera, this.canvas);
    this.controls.addEventListener("change", () => this.render());
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8d8d, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(0.6, 1, 0.4);
    this.scene.add(sun);
    this.root = new THREE.Group();
    if (artefact.up === "z") this.root.rotation.x = -Math.PI / 2; // z-up data, y-up view
    this.scene.add(this.root);
    this.materials = new Map();
    this.build();
    this.resize(container);
    this.fit();
    this.canvas.addEventListener("click", (event) => this.pick(event));
    this.observer = new ResizeObserver(() => this.resize(container));
    this.observer.observe(container);
  }

  material(status, kind = "solid") {
    const key = `${status}:${kind}`;
    if (!this.materials.has(key)) {
      const color = new THREE.Color(this.artefact.colors[status] || "#999999");
      const opacity = TRANSLUCENT[status] ?? 1;
      const mat = kind === "line"
        ? new THREE.LineBasicMaterial({ color: color.clone().multiplyScalar(0.55), transparent: opacity < 1, opacity })
        : new THREE.MeshStandardMaterial({ color, roughness: 0.8, metalness: 0.0, transparent: opacity < 1,
          opacity, depthWrite: opacity >= 1, side: THREE.DoubleSide,
          polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1 });
      this.materials.set(key, mat);
    }
    return this.materials.get(key);
  }

  register(id, object) {
    object.userData.id = id;
    if (!this.objects.has(id)) this.objects.set(id, []);
    this.objects.get(id).push(object);
    this.root.add(object);
  }

  build() {
    const art = this.artefact;
    const edged = art.boxes.length <= MAX_EDGED_BOXES;
    for (const box of art.boxes) {
      const r = box.rotation;
      const m = new THREE.Matrix4().set(r[0], r[1], r[2], 0, r[3], r[4], r[5], 0, r[6], r[7], r[8], 0, 0, 0, 0, 1);
      m.scale(new THREE.Vector3(...box.size.map((s) => Math.max(s, 1e-4))));
      m.setPosition(...box.center);
      const mesh = new THREE.Mesh(UNIT_BOX, this.material(box.status));
      mesh.matrixAutoUpdate = false;
      mesh.matrix.copy(m);
      mesh.userData.label = box.label;
      mesh.userData.base = m.clone();
      this.register(box.id, mesh);
      if (edged) {
        const lines = new THREE.LineSegments(UNIT_EDGES, this.material(box.status, "line"));
        lines.matrixAutoUpdate = false;
        lines.matrix.copy(m);
        lines.userData.base = m.clone();
        lines.userData.label = box.label;
        this.register(box.id, lines);
      }
    }
    for (const item of art.meshes) {
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.Float32BufferAttribute(item.positions, 3));
      geometry.setIndex(item.indices);
      geometry.computeVertexNormals();
      const mesh = new THREE.Mesh(geometry, this.material(item.status));
      mesh.userData.label = item.label;
      this.register(item.id, mesh);
    }
    for (const poly of art.polygons) {
      const shape = new THREE.Shape(poly.points.map((p) => new THREE.Vector2(p[0], p[2])));
      const geometry = new THREE.ShapeGeometry(shape);
      geometry.rotateX(Math.PI / 2); // shape (x, z) plane -> floor, y = 0
      const mesh = new THREE.Mesh(geometry, this.material(poly.status));
      mesh.position.y = poly.points.length ? poly.points[0][1] : 0;
      mesh.userData.label = poly.label;
      this.register(poly.id, mesh);
    }
    this.scene.updateMatrixWorld(true); // bounds in the y-up view, after the z-up turn
    const bounds = new THREE.Box3().setFromObject(this.root);
    if (!bounds.isEmpty()) {
      const size = bounds.getSize(new THREE.Vector3());
      const span = Math.max(size.x, size.z, 1);
      this.cell = span / 5;
      this.grid = new THREE.GridHelper(span * 4, 20, 0xb0b4ba, 0xd7dadf);
      const snap = (v) => Math.round(v / this.cell) * this.cell;
      this.grid.position.set(snap((bounds.min.x + bounds.max.x) / 2), bounds.min.y - 0.001,
        snap((bounds.min.z + bounds.max.z) / 2));
      this.scene.add(this.grid);
    }
  }

  resize(container) {
    const w = Math.max(container.clientWidth, 200), hgt = Math.max(container.clientHeight, 200);
    this.renderer.setSize(w, hgt, false);
    this.camera.aspect = w / hgt;
    this.camera.updateProjectionMatrix();
    this.render();
  }

  fit(ids = null) {
    this.lastCentre = this.artefact.animation ? this.root.localToWorld(this.trackCentre(this.frame || 0)) : null;
    const bounds = new THREE.Box3();
    if (ids && ids.length) {
      for (const id of ids) for (const o of this.objects.get(id) || []) bounds.expandByObject(o);
    }
    if (bounds.isEmpty()) bounds.setFromObject(this.root);
    if (bounds.isEmpty()) bounds.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1));
    const center = bounds.getCenter(new THREE.Vector3());
    const radius = Math.max(bounds.getSize(new THREE.Vector3()).length() / 2, 0.5);
    const distance = radius / Math.sin((this.camera.fov * Math.PI) / 360) * 1.05;
    this.camera.position.copy(center).add(new THREE.Vector3(0.75, 0.55, 1).normalize().multiplyScalar(distance));
    this.camera.near = distance / 200;
    this.camera.far = distance * 50;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(center);
    this.controls.update();
    this.render();
  }

  // Highlights the elements ``ids`` and turns every other one into a faint ghost, so a
  // member inside the frame is not hidden behind the rest; no ids restores the view.
  highlight(ids) {
    const wanted = new Set(ids || []);
    for (const [id, list] of this.objects) {
      const status = this.statusOf(id);
      for (const o of list) {
        if (!wanted.size) {
          o.visible = true;
          if (o.isMesh) o.material = this.material(status);
        } else if (o.isMesh) {
          o.material = wanted.has(id) ? this.highlightMaterial() : this.ghostMaterial(status);
        } else {
          o.visible = wanted.has(id);
        }
      }
    }
    this.render();
  }

  ghostMaterial(status) {
    const key = `${status}:ghost`;
    if (!this.materials.has(key)) {
      this.materials.set(key, new THREE.MeshStandardMaterial({ color: this.artefact.colors[status] || "#999999",
        transparent: true, opacity: 0.12, depthWrite: false, side: THREE.DoubleSide }));
    }
    return this.materials.get(key);
  }

  highlightMaterial() {
    if (!this._hl) this._hl = new THREE.MeshStandardMaterial({ color: 0xffd400, emissive: 0x806a00, side: THREE.DoubleSide });
    return this._hl;
  }

  statusOf(id) {
    if (!this.statuses) {
      this.statuses = new Map();
      for (const group of [this.artefact.boxes, this.artefact.meshes, this.artefact.polygons]) {
        for (const item of group) this.statuses.set(item.id, item.status);
      }
    }
    return this.statuses.get(id) || "ok";
  }

  // Moves every animated box to frame k of the simulated trajectory (build orientation kept).
  // With ``follow`` the camera moves with the machine's mean centre, so a vehicle that drives
  // away stays in view.
  showFrame(k, follow = true) {
    const anim = this.artefact.animation;
    if (!anim) return;
    this.frame = k;
    const position = new THREE.Vector3();
    for (const [id, track] of Object.entries(anim.tracks)) {
      position.set(track[3 * k], track[3 * k + 1], track[3 * k + 2]);
      for (const o of this.objects.get(id) || []) {
        o.matrix.copy(o.userData.base);
        o.matrix.setPosition(position);
      }
    }
    if (follow) {
      const centre = this.root.localToWorld(this.trackCentre(k));
      const shift = centre.sub(this.lastCentre);
      this.camera.position.add(shift);
      this.controls.target.add(shift);
      this.lastCentre = this.root.localToWorld(this.trackCentre(k));
      this.controls.update();
      if (this.grid) {
        // The grid moves under the machine in whole cells, so it still reads as fixed ground.
        const snap = (v) => Math.round(v / this.cell) * this.cell;
        this.grid.position.x = snap(this.lastCentre.x);
        this.grid.position.z = snap(this.lastCentre.z);
      }
    }
    this.render();
  }

  trackCentre(k) {
    const tracks = Object.values(this.artefact.animation.tracks);
    const c = new THREE.Vector3();
    for (const t of tracks) c.add(new THREE.Vector3(t[3 * k], t[3 * k + 1], t[3 * k + 2]));
    return tracks.length ? c.divideScalar(tracks.length) : c;
  }

  pick(event) {
    const rect = this.canvas.getBoundingClientRect();
    const pointer = new THREE.Vector2(((event.clientX - rect.left) / rect.width) * 2 - 1,
      -((event.clientY - rect.top) / rect.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(pointer, this.camera);
    const hit = ray.intersectObjects(this.root.children, false).find((i) => i.object.isMesh);
    if (hit && this.onPick) this.onPick(hit.object.userData.id, hit.object.userData.label);
  }

  render() {
    this.renderer.render(this.scene, this.camera);
  }

  dispose() {
    this.observer.disconnect();
    this.controls.dispose();
    this.renderer.dispose();
  }
}
