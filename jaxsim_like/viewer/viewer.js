// The jaxsim_like viewer: draws the embedded models at the embedded link poses (see page.py for
// the data layout). World frame: z up, metres. URL options: ?frame=K opens paused at frame K;
// ?show=collision,points and ?hide=visual,forces,ground set the toggles;
// ?probe=A,B renders frames A and B with one flat colour per link and writes the pixel count of
// every link (from the camera, and summed over four sides), the pixels that changed between the
// two frames and any script error into the DOM
// (the elements #probe and #errors), for tests in a headless browser.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("jaxsim-data").textContent);
  const options = new URLSearchParams(window.location.search);

  function buffer(base64) {
    const text = atob(base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes.buffer;
  }
  const floats = (base64) => new Float32Array(buffer(base64));
  const ints = (base64) => new Int32Array(buffer(base64));
  const color = (rgba) => new THREE.Color().setRGB(rgba[0], rgba[1], rgba[2], THREE.SRGBColorSpace);

  const times = data.times;
  const frameCount = times.length;
  const worlds = data.worlds;
  const offsets = floats(data.offsets);

  const view = document.getElementById("view");
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(view.clientWidth || window.innerWidth, view.clientHeight || window.innerHeight);
  view.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  const background = new THREE.Color(0xeef0f3);
  scene.background = background;
  const camera = new THREE.PerspectiveCamera(40, renderer.domElement.width / renderer.domElement.height, 0.01, 2000);
  camera.up.set(0, 0, 1);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x667788, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.8);
  sun.position.set(3, -4, 8);
  scene.add(sun);

  const meshGeometries = data.meshes.map((mesh) => {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.BufferAttribute(floats(mesh.vertices), 3));
    const Index = mesh.index === "<u2" ? Uint16Array : Uint32Array;
    geometry.setIndex(new THREE.BufferAttribute(new Index(buffer(mesh.faces)), 1));
    geometry.computeVertexNormals();
    return geometry;
  });

  function shapeGeometry(shape) {
    let geometry;
    switch (shape.type) {
      case "box": return new THREE.BoxGeometry(shape.size[0], shape.size[1], shape.size[2]);
      case "sphere": return new THREE.SphereGeometry(shape.radius, 32, 16);
      case "ellipsoid":
        geometry = new THREE.SphereGeometry(1, 32, 16);
        return geometry.scale(shape.size[0], shape.size[1], shape.size[2]);
      case "cylinder":
        return new THREE.CylinderGeometry(shape.radius, shape.radius, shape.length, 32).rotateX(Math.PI / 2);
      case "capsule":
        return new THREE.CapsuleGeometry(shape.radius, shape.length, 8, 24).rotateX(Math.PI / 2);
      case "plane": {
        geometry = new THREE.PlaneGeometry(shape.size[0], shape.size[1]);
        const normal = new THREE.Vector3(shape.normal[0], shape.normal[1], shape.normal[2]);
        const rotation = new THREE.Matrix4().makeRotationFromQuaternion(
          new THREE.Quaternion().setFromUnitVectors(new THREE.Vector3(0, 0, 1), normal));
        return geometry.applyMatrix4(rotation);
      }
      case "mesh": return meshGeometries[shape.mesh];
      default: throw new Error("unknown shape type " + shape.type);
    }
  }

  function material(shape) {
    const transparent = shape.rgba[3] < 1;
    return new THREE.MeshStandardMaterial({
      color: color(shape.rgba), roughness: 0.65, metalness: 0.05, transparent: transparent, opacity: shape.rgba[3],
      depthWrite: !transparent, flatShading: shape.type === "mesh", side: shape.type === "plane" || shape.type === "mesh" ? THREE.DoubleSide : undefined,
    });
  }

  // One THREE.Group per (model, world, link); its matrix is the link pose of the current frame.
  const groups = { visual: [], collision: [] };
  const bodies = [];
  const labels = [];
  const idMeshes = [];
  const pointBall = new THREE.SphereGeometry(1, 10, 6);
  const shaft = new THREE.CylinderGeometry(1, 1, 1, 10).translate(0, 0.5, 0);
  const head = new THREE.ConeGeometry(1, 1, 12).translate(0, 0.5, 0);
  data.models.forEach((model, m) => {
    const poses = floats(model.poses);
    const points = floats(model.points);
    const linkCount = model.links.length;
    const geometries = model.shapes.map(shapeGeometry);
    const contacts = model.contacts && {
      start: ints(model.contacts.start), index: ints(model.contacts.index), force: floats(model.contacts.force),
    };
    for (let w = 0; w < worlds; w++) {
      const links = [];
      for (let i = 0; i < linkCount; i++) {
        const label = (worlds > 1 ? "world " + w + "/" : "") + model.name + "/" + model.links[i];
        const link = { visual: new THREE.Group(), collision: new THREE.Group(), id: labels.length + 1 };
        labels.push(label);
        for (const group of ["visual", "collision"]) {
          link[group].matrixAutoUpdate = false;
          scene.add(link[group]);
          groups[group].push(link[group]);
        }
        links.push(link);
      }
      model.shapes.forEach((shape, s) => {
        const mesh = new THREE.Mesh(geometries[s], material(shape));
        mesh.matrixAutoUpdate = false;
        mesh.matrix.set(...shape.pose);
        links[shape.link][shape.group].add(mesh);
        if (shape.group === "visual" && shape.type !== "plane") {
          mesh.userData.id = links[shape.link].id;
          idMeshes.push(mesh);
        }
      });
      const pointCount = points.length / 3;
      const radius = model.point_radius;
      const dots = new THREE.InstancedMesh(pointBall, new THREE.MeshBasicMaterial(), Math.max(pointCount, 1));
      dots.count = pointCount;
      const arrows = [shaft, head].map((geometry) => {
        const arrow = new THREE.InstancedMesh(geometry, new THREE.MeshStandardMaterial({ color: 0xd62728 }), Math.max(pointCount, 1));
        arrow.count = 0;
        scene.add(arrow);
        return arrow;
      });
      scene.add(dots);
      bodies.push({ model, poses, points, links, world: w, linkCount, contacts, dots, arrows, radius });
    }
  });

  const ground = new THREE.Group();
  ground.add(new THREE.Mesh(new THREE.PlaneGeometry(1, 1),
    new THREE.MeshStandardMaterial({ color: 0xd5d9df, roughness: 1, transparent: true, opacity: 0.75, depthWrite: false })));
  scene.add(ground);
  const ownGround = !data.models.some((model) => model.shapes.some((shape) => shape.type === "plane"));
  ground.children[0].visible = ownGround;
  let grid = null;

  const position = new THREE.Vector3();
  const quaternion = new THREE.Quaternion();
  const unit = new THREE.Vector3(1, 1, 1);
  const matrix = new THREE.Matrix4();
  const up = new THREE.Vector3(0, 1, 0);
  const red = new THREE.Color(0xd62728);
  const blue = new THREE.Color(0x1f77b4);

  function linkPose(body, frame, link) {
    const k = ((body.world * frameCount + frame) * body.linkCount + link) * 7;
    const p = body.poses;
    position.set(p[k] + offsets[3 * body.world], p[k + 1] + offsets[3 * body.world + 1], p[k + 2] + offsets[3 * body.world + 2]);
    quaternion.set(p[k + 4], p[k + 5], p[k + 6], p[k + 3]);
  }

  function pointPositions(body, frame) {
    const count = body.points.length / 3;
    const out = new Float32Array(3 * count);
    const point = new THREE.Vector3();
    for (let j = 0; j < count; j++) {
      linkPose(body, frame, body.model.point_link[j]);
      point.set(body.points[3 * j], body.points[3 * j + 1], body.points[3 * j + 2]).applyQuaternion(quaternion).add(position);
      out[3 * j] = point.x; out[3 * j + 1] = point.y; out[3 * j + 2] = point.z;
    }
    return out;
  }

  let current = 0;
  function setFrame(frame) {
    current = Math.max(0, Math.min(frameCount - 1, frame | 0));
    for (const body of bodies) {
      for (let i = 0; i < body.linkCount; i++) {
        linkPose(body, current, i);
        for (const group of ["visual", "collision"]) body.links[i][group].matrix.compose(position, quaternion, unit);
      }
      const where = pointPositions(body, current);
      const active = new Map();
      if (body.contacts) {
        const slot = body.world * frameCount + current;
        for (let e = body.contacts.start[slot]; e < body.contacts.start[slot + 1]; e++) active.set(body.contacts.index[e], e);
      }
      const size = new THREE.Vector3(body.radius, body.radius, body.radius);
      for (let j = 0; j < where.length / 3; j++) {
        position.set(where[3 * j], where[3 * j + 1], where[3 * j + 2]);
        body.dots.setMatrixAt(j, matrix.compose(position, quaternion.identity(), size));
        body.dots.setColorAt(j, active.has(j) ? red : blue);
      }
      body.dots.instanceMatrix.needsUpdate = true;
      if (body.dots.instanceColor) body.dots.instanceColor.needsUpdate = true;
      let drawn = 0;
      const force = new THREE.Vector3();
      for (const [j, e] of active) {
        force.set(body.contacts.force[3 * e], body.contacts.force[3 * e + 1], body.contacts.force[3 * e + 2]);
        const length = Math.min(force.length() * body.model.force_scale, body.model.max_arrow);
        if (length < 1e-4) continue;
        position.set(where[3 * j], where[3 * j + 1], where[3 * j + 2]);
        quaternion.setFromUnitVectors(up, force.normalize());
        const r = body.radius * 0.6;
        body.arrows[0].setMatrixAt(drawn, matrix.compose(position, quaternion, new THREE.Vector3(r, 0.8 * length, r)));
        position.addScaledVector(force, 0.8 * length);
        body.arrows[1].setMatrixAt(drawn, matrix.compose(position, quaternion, new THREE.Vector3(2.2 * r, 0.2 * length, 2.2 * r)));
        drawn++;
      }
      for (const arrow of body.arrows) { arrow.count = drawn; arrow.instanceMatrix.needsUpdate = true; }
    }
    slider.value = String(current);
    timeLabel.textContent = times[current].toFixed(3) + " s";
  }

  function bounds() {
    const low = new THREE.Vector3(Infinity, Infinity, Infinity);
    const high = new THREE.Vector3(-Infinity, -Infinity, -Infinity);
    for (const body of bodies) {
      for (let i = 0; i < body.linkCount; i++) {
        linkPose(body, current, i);
        low.min(position); high.max(position);
      }
      const where = pointPositions(body, current);
      for (let j = 0; j < where.length; j += 3) {
        position.set(where[j], where[j + 1], where[j + 2]);
        low.min(position); high.max(position);
      }
    }
    return { low, high };
  }

  function frameScene() {
    const { low, high } = bounds();
    const center = low.clone().add(high).multiplyScalar(0.5);
    const radius = Math.max(0.5 * high.distanceTo(low), 0.3) + 0.1;
    const distance = radius / Math.sin((camera.fov * Math.PI) / 360) * 1.05;
    camera.position.copy(center).add(new THREE.Vector3(1.0, -1.6, 0.7).normalize().multiplyScalar(distance));
    camera.near = distance / 100;
    camera.far = distance * 100;
    camera.updateProjectionMatrix();
    controls.target.copy(center);
    controls.update();
    const extent = 2 * Math.ceil(Math.max(high.x - low.x, high.y - low.y, 1) + 2);
    ground.children[0].scale.set(extent, extent, 1);
    ground.position.set(Math.round(center.x), Math.round(center.y), -0.0005);
    if (grid) { ground.remove(grid); grid.geometry.dispose(); }
    const cell = extent <= 12 ? 0.25 : extent <= 60 ? 1 : 10;
    grid = new THREE.GridHelper(extent, Math.round(extent / cell), 0x6b7580, 0x9aa3ad);
    grid.rotation.x = Math.PI / 2;
    grid.position.z = 0.0005;
    ground.add(grid);
  }

  const bar = document.getElementById("bar");
  const slider = document.getElementById("slider");
  const timeLabel = document.getElementById("time");
  const playButton = document.getElementById("play");
  const speed = document.getElementById("speed");
  slider.max = String(frameCount - 1);
  if (frameCount < 2) bar.classList.add("single");
  document.getElementById("title").textContent = data.title;
  const controls = new THREE.OrbitControls(camera, renderer.domElement);

  let playing = frameCount > 1 && !options.has("frame") && !options.has("probe");
  let clock = 0;
  let last = null;
  function setPlaying(value) {
    playing = value && frameCount > 1;
    playButton.innerHTML = playing ? "&#10074;&#10074;" : "&#9654;";
    last = null;
    clock = times[current] - times[0];
  }
  playButton.addEventListener("click", () => setPlaying(!playing));
  slider.addEventListener("input", () => { setPlaying(false); setFrame(Number(slider.value)); });
  window.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" && event.target.type === "range") return;
    if (event.key === " ") { setPlaying(!playing); event.preventDefault(); }
    if (event.key === "ArrowRight") { setPlaying(false); setFrame(current + 1); }
    if (event.key === "ArrowLeft") { setPlaying(false); setFrame(current - 1); }
  });
  for (const [option, checked] of [["show", true], ["hide", false]]) {
    for (const name of (options.get(option) || "").split(",").filter(Boolean)) {
      const box = document.getElementById("show-" + name);
      if (box) box.checked = checked;
    }
  }
  function toggle(id, apply) {
    const box = document.getElementById(id);
    box.addEventListener("change", () => apply(box.checked));
    apply(box.checked);
  }
  toggle("show-visual", (on) => groups.visual.forEach((g) => { g.visible = on; }));
  toggle("show-collision", (on) => groups.collision.forEach((g) => { g.visible = on; }));
  toggle("show-points", (on) => bodies.forEach((b) => { b.dots.visible = on; }));
  toggle("show-forces", (on) => bodies.forEach((b) => b.arrows.forEach((a) => { a.visible = on; })));
  toggle("show-ground", (on) => { ground.visible = on; });
  document.getElementById("reset").addEventListener("click", frameScene);
  window.addEventListener("resize", () => {
    renderer.setSize(view.clientWidth, view.clientHeight);
    camera.aspect = view.clientWidth / view.clientHeight;
    camera.updateProjectionMatrix();
  });

  function animate(now) {
    if (playing) {
      if (last !== null) {
        clock += ((now - last) / 1000) * Number(speed.value);
        const span = times[frameCount - 1] - times[0];
        if (clock > span) clock = 0;
        let frame = current;
        while (frame + 1 < frameCount && times[frame + 1] - times[0] <= clock) frame++;
        if (times[frame] - times[0] > clock) frame = 0;
        while (frame + 1 < frameCount && times[frame + 1] - times[0] <= clock) frame++;
        setFrame(frame);
      }
      last = now;
    }
    renderer.render(scene, camera);
    window.requestAnimationFrame(animate);
  }

  // The probe: one flat colour per link (6 bits per channel, read back to the nearest step).
  function idColor(id) {
    return new THREE.Color().setRGB(((id >> 12) & 63) * 4 / 255 + 2 / 255, ((id >> 6) & 63) * 4 / 255 + 2 / 255,
      (id & 63) * 4 / 255 + 2 / 255, THREE.LinearSRGBColorSpace);
  }
  function idImage() {
    const width = renderer.domElement.width, height = renderer.domElement.height;
    const target = new THREE.WebGLRenderTarget(width, height);
    const saved = idMeshes.map((mesh) => mesh.material);
    const hidden = [ground, ...groups.collision, ...bodies.map((b) => b.dots), ...bodies.flatMap((b) => b.arrows)];
    const visibility = hidden.map((object) => object.visible);
    idMeshes.forEach((mesh) => { mesh.material = new THREE.MeshBasicMaterial({ color: idColor(mesh.userData.id) }); });
    hidden.forEach((object) => { object.visible = false; });
    groups.visual.forEach((g) => { g.visible = true; });
    scene.background = new THREE.Color(0, 0, 0);
    renderer.setRenderTarget(target);
    renderer.render(scene, camera);
    const pixels = new Uint8Array(4 * width * height);
    renderer.readRenderTargetPixels(target, 0, 0, width, height, pixels);
    renderer.setRenderTarget(null);
    scene.background = background;
    idMeshes.forEach((mesh, k) => { mesh.material.dispose(); mesh.material = saved[k]; });
    hidden.forEach((object, k) => { object.visible = visibility[k]; });
    document.getElementById("show-visual").dispatchEvent(new Event("change"));
    target.dispose();
    const ids = new Int32Array(width * height);
    for (let k = 0; k < ids.length; k++) {
      ids[k] = ((pixels[4 * k] >> 2) << 12) | ((pixels[4 * k + 1] >> 2) << 6) | (pixels[4 * k + 2] >> 2);
    }
    return ids;
  }
  function counts(ids) {
    const pixels = {};
    labels.forEach((label) => { pixels[label] = 0; });
    let background = 0, unknown = 0;
    for (let k = 0; k < ids.length; k++) {
      if (ids[k] === 0) background++;
      else if (ids[k] <= labels.length) pixels[labels[ids[k] - 1]]++;
      else unknown++;
    }
    return { pixels, background, unknown };
  }
  // Each frame is seen from the camera, then from three more sides (the camera turned by 90, 180
  // and 270 degrees about the vertical through its target): "sides" sums the pixels of all four.
  function probe(frames) {
    const result = { revision: THREE.REVISION, size: [renderer.domElement.width, renderer.domElement.height], frames: [] };
    const images = [];
    const home = camera.position.clone();
    const turn = new THREE.Quaternion();
    for (const frame of frames) {
      setFrame(frame);
      const ids = idImage();
      images.push(ids);
      const seen = counts(ids);
      const sides = Object.assign({}, seen.pixels);
      for (let side = 1; side < 4; side++) {
        turn.setFromAxisAngle(new THREE.Vector3(0, 0, 1), (side * Math.PI) / 2);
        camera.position.copy(home).sub(controls.target).applyQuaternion(turn).add(controls.target);
        camera.lookAt(controls.target);
        const other = counts(idImage()).pixels;
        for (const label of labels) sides[label] += other[label];
      }
      camera.position.copy(home);
      camera.lookAt(controls.target);
      result.frames.push({ frame: current, time: times[current], pixels: seen.pixels, sides, background: seen.background, unknown: seen.unknown });
    }
    if (images.length > 1) {
      let changed = 0;
      for (let k = 0; k < images[0].length; k++) if (images[0][k] !== images[1][k]) changed++;
      result.changed = changed;
    }
    document.getElementById("probe").textContent = JSON.stringify(result);
  }

  setFrame(Number(options.get("frame") || 0));
  frameScene();
  setPlaying(playing);
  if (options.has("probe")) probe(options.get("probe").split(",").map(Number));
  renderer.render(scene, camera);
  window.jaxsimViewer = { setFrame, frameScene, frameCount, labels };
  window.requestAnimationFrame(animate);
})();
