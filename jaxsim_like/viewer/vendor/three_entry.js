// The parts of three.js the viewer uses, bundled by build_three.sh into three.min.js (global THREE).
export {
  AmbientLight, BoxGeometry, BufferAttribute, BufferGeometry, CapsuleGeometry, Color, ConeGeometry,
  CylinderGeometry, DirectionalLight, DoubleSide, GridHelper, Group, HemisphereLight, InstancedMesh,
  LinearSRGBColorSpace, Matrix4, Mesh, MeshBasicMaterial, MeshStandardMaterial, PerspectiveCamera,
  PlaneGeometry, Quaternion, REVISION, SRGBColorSpace, Scene, SphereGeometry, Vector3, WebGLRenderTarget,
  WebGLRenderer,
} from 'three';
export { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
