// PLACEHOLDER: replaced by the module that owns this command.
import type { Command } from 'commander';

export function registerClassify(_program: Command): void {}
