#!/usr/bin/env python3
# Joins the replica curves (replicon eigenvalue) with the landscape probe of direct ERM.
# Run inside data/validation/landscape: python3 make_table.py > table.md
import csv,sys
def rd(f):
    rows=[r for r in open(f) if not r.startswith('#')]
    return list(csv.DictReader(rows))
at={}
for L in (2,3):
    for r in rd(f'replica_L{L}.csv'):
        at[(r['L'],r['activation'],float(r['alpha']))]=(float(r['at_eigenvalue']),float(r['at_eigenvalue_se']),r['rs_stability'],float(r['jump_share']),float(r['jump_share_se']))
pr={}
for L in (2,3):
    for D in (400,800):
        try: rows=rd(f'L{L}_D{D}.csv')
        except FileNotFoundError: continue
        for r in rows:
            k=(r['L'],r['activation'],float(r['alpha']))
            gk=(float(r['q_k_aa'])-float(r['q_k_ab']))/float(r['q_k_aa'])
            gv=(float(r['q_v_aa'])-float(r['q_v_ab']))/float(r['q_v_aa'])
            pr.setdefault(k,{})[D]=(gk,gv,float(r['loss_spread']))
print('| L | activation | alpha | replicon eigenvalue (RS) | rs_stability | jump_share | gap_k D=400 | gap_k D=800 | gap_v D=400 | gap_v D=800 | loss spread D=400 | D=800 |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|')
for k in sorted(pr):
    a=at.get(k)
    p=pr[k]
    f=lambda D,i: ('%.3f'%p[D][i]) if D in p else '-'
    g=lambda D: ('%.1e'%p[D][2]) if D in p else '-'
    print(f'| {k[0]} | {k[1]} | {k[2]:g} | {a[0]:.2f} ± {a[1]:.2f} | {a[2]} | {a[3]:.3f} ± {a[4]:.3f} | {f(400,0)} | {f(800,0)} | {f(400,1)} | {f(800,1)} | {g(400)} | {g(800)} |')
