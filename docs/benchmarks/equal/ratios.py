# ratios.py: the DiskGNN/Ginex/MariusGNN ratio arithmetic of docs/REPRODUCTION.md
# ("Re-measured on equal terms") from scripts/bench-variants.sh output folders:
# medians of per-run values, Ginex less its wall-clock sampling over DiskGNN,
# each epoch + prepare_s, feature bytes. usage: python3 ratios.py OUT_DIR...
import json,glob,os,statistics as st,sys,re
def runs(d):
    out={}
    for f in sorted(glob.glob(d+'/*.jsonl')):
        tag=os.path.basename(f)[:-6]
        m=re.match(r'(.*)_(\d+)pct_r(\d+)',tag)
        sysn,lim=m.group(1),m.group(2)
        ep=None; prep=None; peak=None
        for line in open(f):
            r=json.loads(line)
            if r.get('type')=='epoch' and ep is None: ep=r
            if r.get('type')=='summary': prep=r.get('prepare_s',0); peak=r.get('peak_cgroup_bytes')
        if ep is None: continue
        out.setdefault((lim,sysn),[]).append(dict(epoch=ep['epoch_s'],ws=ep.get('wall_sample_s',0),prep=prep or 0,
            feat=ep.get('feature_bytes_read',0),eff=ep.get('io_efficiency',0),floor=ep.get('io_floor_s',0),peak=peak,
            counters=ep.get('counters',{}),tiers=ep.get('tiers',{})))
    return out
med=lambda xs: st.median(xs)
for d in sys.argv[1:]:
    R=runs(d); print('##',d)
    for (lim,s),rs in sorted(R.items()):
        print(f"{lim}% {s}: n={len(rs)} epoch {med([r['epoch']for r in rs]):.2f} ({min(r['epoch']for r in rs):.2f}-{max(r['epoch']for r in rs):.2f}) epoch-sample {med([r['epoch']-r['ws'] for r in rs]):.2f} prep {med([r['prep'] for r in rs]):.2f} epoch+prep {med([r['epoch']+r['prep'] for r in rs]):.2f} featGB {med([r['feat'] for r in rs])/1e9:.2f} eff {med([r['eff'] for r in rs]):.2f} floor {med([r['floor'] for r in rs]):.2f} peakMiB {med([r['peak'] or 0 for r in rs])/2**20:.0f} pack_ms {med([r['counters'].get('pack_ms',0) for r in rs])} search_us {med([r['counters'].get('search_us',0) for r in rs])} dcache_rows {med([r['counters'].get('disk_cache_rows',0) for r in rs])} segs {med([r['counters'].get('segment_size',0) for r in rs])}")
    lims=sorted(set(l for l,_ in R))
    for l in lims:
        g=R.get((l,'ginex')); dk=R.get((l,'diskgnn')); mg=R.get((l,'mariusgnn'))
        if g and dk:
            a=med([r['epoch']-r['ws'] for r in g]); b=med([r['epoch'] for r in dk])
            c=med([r['epoch']+r['prep'] for r in g]); e=med([r['epoch']+r['prep'] for r in dk])
            print(f"{l}%: ginex-less-sample/diskgnn {a/b:.1f}x  whole {med([r['epoch'] for r in g])/b:.1f}x  ginex+sample+prep/diskgnn+prep {c/e:.1f}x  traffic 1/{med([r['feat'] for r in g])/med([r['feat'] for r in dk]):.1f}")
        if mg and dk:
            print(f"{l}%: mariusgnn/diskgnn {med([r['epoch'] for r in mg])/med([r['epoch'] for r in dk]):.2f}x  with prep {med([r['epoch']+r['prep'] for r in mg])/med([r['epoch']+r['prep'] for r in dk]):.2f}x")
