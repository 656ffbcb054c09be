// PLACEHOLDER: replaced by the module that owns this command.
import type { Command } from 'commander';

export function registerModels(_program: Command): void {}
