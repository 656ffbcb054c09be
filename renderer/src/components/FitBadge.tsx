// A local model's fit on the machine running TATRA (models.fit), shown one way wherever a model is:
// the Models view's library and the model pickers. A badge says whether it fits, where its layers
// go and the memory it needs (the estimate's details in its tooltip); when some or all layers are
// kept off a GPU that is there, the offload is said in words under it, not only in the tooltip.
import { useEffect } from 'react';
import type { FitEstimate } from '../../../electron/common/contract/models';
import { formatBytes } from '../../../electron/common/bytes';
import { useStore } from '../store';

/** The badge's words: "fits · 19/29 on GPU · 7.9 GiB". */
export function fitBadgeText(f: FitEstimate): string {
  const where = !f.fits ? "won't fit" : f.plan === 'gpu' ? 'fits · GPU' : f.plan === 'partial' ? `fits · ${f.gpuLayers}/${f.totalLayers} on GPU` : 'fits · CPU';
  return `${where} · ${formatBytes(f.totalBytes)}`;
}

/** The fit of the GGUF at `path`, asked for once when nobody has yet. */
export function FitBadge({ path }: { path: string }) {
  const fit = useStore((s) => s.fits[path]);
  const loadFit = useStore((s) => s.loadFit);
  useEffect(() => {
    if (!fit) void loadFit(path);
  }, [fit, loadFit, path]);
  if (!fit) {
    return (
      <span className="chip" title="checking the fit" data-testid="fit-badge">
        …
      </span>
    );
  }
  if ('error' in fit) {
    return (
      <span className="chip bad" title={fit.error} data-testid="fit-badge">
        fit unknown
      </span>
    );
  }
  const f: FitEstimate = fit;
  const title = `${formatBytes(f.totalBytes)} needed (${formatBytes(f.modelBytes)} weights + ${formatBytes(f.contextBytes)} for ${f.contextSize} tokens × ${f.sequences}); ${f.offload}${f.warning && f.warning.indexOf(f.offload) < 0 ? `. ${f.warning}` : ''}`;
  const cls = !f.fits ? 'chip bad' : f.warning ? 'chip warn' : 'chip ok';
  // Some or all layers kept off a GPU that is there: said in words under the badge, not only in its tooltip.
  const offGpu = f.fits && f.gpu.backend !== 'cpu' && f.plan !== 'gpu';
  return (
    <span className="fit">
      <span className={cls} title={title} data-testid="fit-badge" data-fits={f.fits} data-plan={f.plan}>
        {fitBadgeText(f)}
      </span>
      {offGpu && (
        <span className="fit-offload" data-testid="fit-offload">
          {f.offload}
        </span>
      )}
    </span>
  );
}
