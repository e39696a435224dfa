/*
** report/flame.c: an interactive SVG flame graph.
**
** Why we write the SVG ourselves, and not with cairo's SVG surface or by
** piping folded stacks to flamegraph.pl: Debian packages no flame-graph
** renderer (no flamegraph.pl, no inferno), so "folded | flamegraph.pl"
** would send users to fetch a script first; and cairo draws a static
** picture (text turned into glyph outlines, no <title>, no script), while
** what people expect from a flame graph SVG is flamegraph.pl's: hover for
** a frame's time, click to zoom, search. So this is the same kind of
** document flamegraph.pl writes: one <g class="f"> per call-tree node with
** a <title> (name, time, share), a <rect> and a <text> cut to fit, and a
** small script for zoom and search. It opens in any browser.
**
** Layout: the root bar ("all", the profile's time) at the bottom, the
** processes above it, then each process's call tree upwards; a node's
** width is its total time, children left to right heaviest first (the
** report's order). Nodes narrower than MIN_PX are left out (their time
** stays in the parent's width) and counted in the subtitle.
*/
#include "config.h"

#include "report/format.h"
#include <spyon/report.h>
#include "report/walk.h"

#include <stdlib.h>
#include <string.h>

#define WIDTH 1200.0  /* px, the whole graph */
#define PAD 10.0      /* px, left and right margins */
#define ROW 16.0      /* px per level */
#define FONT 12.0     /* px */
#define CHAR_W 7.2    /* px: a monospace character at FONT (0.6 em) */
#define MIN_PX 0.1    /* px: narrower frames are not drawn */
#define TOP 48.0      /* px above the highest row: title, buttons */
#define BOTTOM 26.0   /* px below the root: the details line */

/* ------------------------------------------------------------------------
** Colours
** --------------------------------------------------------------------- */

/* A stable colour per name (so a frame has the same colour in every
** graph), in a hue band per kind: methods warm as in flamegraph.pl,
** primitives blue, GC grey, regions green, native frames orange. */
static void colour(spyR_buf *b, int kind, const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    h = (h ^ *c) * 16777619u;
  double v1 = (double)(h & 0xff) / 255.0, v2 = (double)((h >> 8) & 0xff) / 255;
  int r, g, bl;
  switch (kind) {
  case SPY_FRAME_PRIM:
    r = 60 + (int)(60 * v1), g = 130 + (int)(70 * v2), bl = 230;
    break;
  case SPY_FRAME_GC:
    r = g = bl = 160 + (int)(40 * v1);
    break;
  case SPY_FRAME_REGION:
    r = 80 + (int)(60 * v1), g = 190 + (int)(50 * v2), bl = 90;
    break;
  case SPY_FRAME_NATIVE:
    r = 240, g = 140 + (int)(60 * v1), bl = 40;
    break;
  case SPY_FRAME_ROOT:
    r = 200, g = 200, bl = 210;
    break;
  default:
    r = 205 + (int)(50 * v1), g = (int)(230 * v2), bl = (int)(55 * v1);
    break;
  }
  spyR_buf_printf(b, "rgb(%d,%d,%d)", r, g, bl);
}

/* ------------------------------------------------------------------------
** Frames
** --------------------------------------------------------------------- */

typedef struct flame {
  FILE *f;
  const spy_profile *p;
  double base;     /* ns of the whole graph's width */
  double scale;    /* px per ns */
  unsigned depth;  /* rows: the highest level drawn + 1 */
  size_t drawn, hidden;
  spyR_buf out, lab, tmp;
} flame;

/* One frame: its <g> with title, rect and fitted text. level 0 is the
** root bar. */
static void frame(flame *fl, unsigned level, double x, double ns, int kind,
                  const char *name, double height_px) {
  double w = ns * fl->scale;
  double y = height_px - BOTTOM - ROW * (level + 1);
  char ms[32];
  spyR_buf *o = &fl->out;
  spyR_buf_puts(o, "<g class=\"f\"><title>");
  spyR_xml_str(o, name);
  spyR_fmt_fixed(ms, ns / 1e6, 2);
  spyR_buf_printf(o, " (%s ms, %.2f %%)</title>", ms,
                  fl->base > 0 ? 100.0 * ns / fl->base : 0.0);
  spyR_buf_printf(o, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                     "height=\"%.1f\" fill=\"",
                  PAD + x * fl->scale, y, w, ROW - 1);
  colour(o, kind, name);
  spyR_buf_puts(o, "\" rx=\"2\"/><text x=\"");
  spyR_buf_printf(o, "%.2f\" y=\"%.1f\">", PAD + x * fl->scale + 3,
                  y + ROW - 4.5);
  /* The name cut to the width, as the script cuts it after a zoom. */
  size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
  spyR_buf_clear(&fl->tmp);
  spyR_buf_puts(&fl->tmp, name);
  if (spyR_columns(spyR_buf_str(&fl->tmp), fl->tmp.len) > fit) {
    if (fit >= 4) spyR_truncate(&fl->tmp, fit);
    else spyR_buf_clear(&fl->tmp);
  }
  spyR_xml_str(o, spyR_buf_str(&fl->tmp));
  spyR_buf_puts(o, "</text></g>\n");
  fl->drawn++;
  if (o->len > 65536 && !o->oom) {
    fwrite(o->s, 1, o->len, fl->f);
    spyR_buf_clear(o);
  }
}

/* A node waiting to be drawn: where it goes. */
typedef struct item {
  uint32_t node;
  unsigned level;
  double x;
} item;

/* Draw (or, when height_px is 0, only measure: fl->depth) the subtree of
** process root `root` at level 1, starting at x0 (ns), depth first over
** an explicit stack so deep trees cannot overflow the C stack. */
static int subtree(flame *fl, uint32_t root, double x0, double height_px) {
  const spy_profile *p = fl->p;
  size_t cap = 256, n = 0;
  item *st = malloc(cap * sizeof *st);
  if (!st) return SPY_ENOMEM;
  st[n++] = (item){root, 1, x0};
  int rc = 0;
  size_t visited = 0;
  while (n && rc == 0) {
    item it = st[--n];
    const spy_node *nd = &p->nodes[it.node];
    if (++visited > p->nnodes) {
      rc = SPY_EFORMAT;
      break;
    }
    if ((double)nd->total_ns * fl->scale < MIN_PX) {
      fl->hidden++;
      continue;
    }
    if (it.level + 1 > fl->depth) fl->depth = it.level + 1;
    if (height_px > 0) {
      spyR_buf_clear(&fl->lab);
      if (it.node == root) {
        const spy_process *pr = NULL;
        for (size_t k = 0; k < p->nprocesses; k++)
          if (p->processes[k].root == root) pr = &p->processes[k];
        spyR_buf_printf(&fl->lab, "%s (pid %" PRIu64 ")",
                        pr && pr->name ? pr->name : "?", pr ? pr->pid : 0);
      } else {
        spyR_label(&fl->lab, p, nd->frame);
      }
      if (fl->lab.oom) {
        rc = SPY_ENOMEM;
        break;
      }
      int kind = nd->frame < p->nframes ? (int)p->frames[nd->frame].kind : 0;
      frame(fl, it.level, it.x, (double)nd->total_ns, kind, fl->lab.s,
            height_px);
    }
    uint32_t *kids;
    size_t nk;
    if ((rc = spyR_children(p, it.node, 0, &kids, &nk)) != 0) break;
    /* Pushed right to left so the heaviest is drawn first. */
    double x = it.x;
    for (size_t i = 0; i < nk; i++) x += (double)p->nodes[kids[i]].total_ns;
    for (size_t i = nk; i-- > 0;) {
      x -= (double)p->nodes[kids[i]].total_ns;
      if (n == cap) {
        item *ns = realloc(st, (cap *= 2) * sizeof *ns);
        if (!ns) {
          rc = SPY_ENOMEM;
          break;
        }
        st = ns;
      }
      st[n++] = (item){kids[i], it.level + 1, x};
    }
    free(kids);
  }
  free(st);
  return rc;
}

/* ------------------------------------------------------------------------
** The document
** --------------------------------------------------------------------- */

/* Zoom: clicking a frame widens it to the whole graph, hides what is not
** above or below it and dims its ancestors; clicking the root (or "Reset
** zoom") goes back. Search: a regular expression (Ctrl-F or the button)
** turns the matching frames magenta and prints the share they cover
** (each time counted once: a match inside a match is not added). Names
** are re-cut to their new width after each zoom. */
static const char script[] =
    "var W=" "1200" ",P=10,CW=7.2,fr=[],det,zoomed=null,ms;\n"
    "function init(){det=document.getElementById('details');\n"
    " ms=document.getElementById('matched');\n"
    " var gs=document.getElementsByClassName('f');\n"
    " for(var i=0;i<gs.length;i++){var g=gs[i],r=g.querySelector('rect'),"
    "t=g.querySelector('text'),ti=g.querySelector('title');\n"
    "  var o={g:g,r:r,t:t,x:+r.getAttribute('x'),w:+r.getAttribute('width'),"
    "y:+r.getAttribute('y'),n:ti.textContent.replace(/ \\([^(]*\\)$/,''),"
    "f:r.getAttribute('fill'),title:ti.textContent};\n"
    "  fr.push(o);g.onmouseover=show(o);g.onmouseout=function(){det.textContent"
    "=' ';};g.onclick=zoomf(o);}\n"
    " document.getElementById('reset').onclick=function(){zoom(null);};\n"
    " document.getElementById('search').onclick=search;\n"
    " window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)"
    "&&e.keyCode==70){e.preventDefault();search();}});}\n"
    "function show(o){return function(){det.textContent=o.title;};}\n"
    "function zoomf(o){return function(){zoom(o===fr[0]?null:o);};}\n"
    "function fit(o,x,w){o.r.setAttribute('x',x);o.r.setAttribute('width',w);"
    "o.t.setAttribute('x',x+3);var n=Math.floor((w-6)/CW);\n"
    " o.t.textContent=n<3?'':(o.n.length>n?o.n.substring(0,n-3)+'...':o.n);}\n"
    "function zoom(z){zoomed=z;var x0=P,s=1;\n"
    " if(z){x0=z.x;s=(W-2*P)/z.w;}\n"
    " for(var i=0;i<fr.length;i++){var o=fr[i];\n"
    "  if(!z){o.g.style.display='';o.g.style.opacity='';fit(o,o.x,o.w);"
    "continue;}\n"
    "  var inside=o.x>=z.x-1e-6&&o.x+o.w<=z.x+z.w+1e-6;\n"
    "  if(o.y>=z.y&&o.x<=z.x+1e-6&&o.x+o.w>=z.x+z.w-1e-6){o.g.style.display="
    "'';\n"
    "   o.g.style.opacity=o===z?'':'0.5';fit(o,P,W-2*P);}\n"
    "  else if(o.y<z.y&&inside){o.g.style.display='';o.g.style.opacity='';"
    "fit(o,P+(o.x-x0)*s,o.w*s);}\n"
    "  else o.g.style.display='none';}\n"
    " document.getElementById('reset').style.display=z?'':'none';}\n"
    "function search(){var t=prompt('Search (regular expression)','');\n"
    " if(t===null)return;var re;try{re=new RegExp(t);}catch(e){"
    "alert(e);return;}\n"
    " var cov=[],tot=fr[0].w;\n"
    " for(var i=0;i<fr.length;i++){var o=fr[i],m=t!==''&&re.test(o.n);\n"
    "  o.r.setAttribute('fill',m?'rgb(230,0,230)':o.f);if(m)cov.push([o.x,"
    "o.x+o.w]);}\n"
    " cov.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
    " for(var j=0;j<cov.length;j++){var a=Math.max(cov[j][0],end);\n"
    "  if(cov[j][1]>a)sum+=cov[j][1]-a;end=Math.max(end,cov[j][1]);}\n"
    " ms.textContent=t===''?'':'Matched: '+(100*sum/tot).toFixed(1)+' %';}\n";

int spy_report_svg(const spy_profile *p, FILE *f, const char *title) {
  if (!p || !f) return SPY_EINVAL;
  uint32_t *ix = spyR_process_order(p);
  if (!ix) return SPY_ENOMEM;
  flame fl;
  memset(&fl, 0, sizeof fl);
  fl.f = f;
  fl.p = p;
  for (size_t k = 0; k < p->nprocesses; k++)
    fl.base += (double)p->processes[k].total_ns;
  fl.scale = fl.base > 0 ? (WIDTH - 2 * PAD) / fl.base : 0;
  fl.depth = 1;
  int rc = 0;
  /* Measure the height first (levels drawn), then draw. */
  for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
    if (p->processes[ix[k]].root >= p->nnodes) rc = SPY_EFORMAT;
    else if (fl.base > 0) rc = subtree(&fl, p->processes[ix[k]].root, 0, 0);
  }
  double height = TOP + BOTTOM + ROW * fl.depth + 4;
  fl.hidden = 0;
  if (!title) title = p->command && *p->command ? p->command : "spyon";
  spyR_buf *o = &fl.out;
  spyR_buf_printf(o,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                  "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "onload=\"init()\">\n",
                  WIDTH, height, WIDTH, height);
  spyR_buf_puts(o, "<style>text{font-family:monospace;font-size:12px;"
                   "fill:#000}g.f text{pointer-events:none}"
                   "g.f:hover rect{stroke:#000;stroke-width:0.5}"
                   ".b{cursor:pointer;fill:#1a5fb4}</style>\n");
  spyR_buf_puts(o, "<script type=\"text/ecmascript\"><![CDATA[\n");
  spyR_buf_puts(o, script);
  spyR_buf_puts(o, "]]></script>\n");
  spyR_buf_printf(o, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
                     "fill=\"#fdfdf6\"/>\n", WIDTH, height);
  spyR_buf_printf(o, "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" "
                     "style=\"font-size:16px\">", WIDTH / 2);
  spyR_xml_str(o, title);
  spyR_buf_puts(o, "</text>\n");
  char ms[32], tl[32];
  spyR_fmt_fixed(ms, fl.base / 1e6, 1);
  spyR_buf_printf(o, "<text x=\"%.0f\" y=\"38\" text-anchor=\"middle\" "
                     "style=\"fill:#555\">%s ms, %s tallies, %s mode; "
                     "width is total time</text>\n",
                  WIDTH / 2, ms, spyR_fmt_group(tl, p->tallies),
                  p->mode == SPY_MODE_TIMER ? "timer" : "poll");
  spyR_buf_printf(o, "<text id=\"reset\" class=\"b\" x=\"%.0f\" y=\"20\" "
                     "style=\"display:none\">Reset zoom</text>\n", PAD);
  spyR_buf_printf(o, "<text id=\"search\" class=\"b\" x=\"%.0f\" y=\"20\" "
                     "text-anchor=\"end\">Search</text>\n", WIDTH - PAD);
  spyR_buf_printf(o, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" "
                     "text-anchor=\"end\"> </text>\n", WIDTH - PAD,
                  height - 8);
  spyR_buf_printf(o, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n",
                  PAD, height - 8);
  if (fl.base > 0) {
    frame(&fl, 0, 0, fl.base, SPY_FRAME_ROOT, "all", height);
    double x = 0;
    for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
      const spy_process *pr = &p->processes[ix[k]];
      rc = subtree(&fl, pr->root, x, height);
      x += (double)pr->total_ns;
    }
  }
  if (fl.hidden)
    spyR_buf_printf(o, "<!-- %zu frames under %.1f px not drawn -->\n",
                    fl.hidden, MIN_PX);
  spyR_buf_puts(o, "</svg>\n");
  if (rc == 0 && (o->oom || fl.lab.oom || fl.tmp.oom)) rc = SPY_ENOMEM;
  if (rc == 0) fwrite(o->s, 1, o->len, f);
  free(ix);
  spyR_buf_free(&fl.out);
  spyR_buf_free(&fl.lab);
  spyR_buf_free(&fl.tmp);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}
