/**
 * Every kprobe-run command: one import per command module (each registers
 * itself with registerCommand). Add yours here.
 */
import { registry } from '../io';
import './info';
import './sym';
import './lines';
import './runOptions';
import './probeOptions';
import './sysctlOptions';
import './policyOptions';
import './atOptions';
import './moduleOptions';
import './run';
import './exec';
import './boot';

export const commands = registry;
