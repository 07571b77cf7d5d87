import { labProject } from './vitest-project.ts';

export default labProject('stand-ins');
