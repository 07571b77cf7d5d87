import { labProject } from '../stand-ins/vitest-project.ts';

export default labProject('ops');
