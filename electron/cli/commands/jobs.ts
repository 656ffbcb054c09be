// PLACEHOLDER: replaced by the module that owns this command.
import type { Command } from 'commander';

export function registerJobs(_program: Command): void {}
