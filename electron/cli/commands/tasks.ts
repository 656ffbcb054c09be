// PLACEHOLDER: replaced by the module that owns this command.
import type { Command } from 'commander';

export function registerTasks(_program: Command): void {}
