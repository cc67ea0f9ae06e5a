// The dashboard's styles: system fonts, colours with at least 4.5:1 contrast on white, visible focus.
export const STYLE_CSS = `
:root { --fg: #1b1f24; --muted: #4f5761; --line: #d5d9de; --ok: #116329; --wait: #7a4d00; --bad: #a40e26; --link: #0b57d0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: var(--fg); background: #fff; }
a { color: var(--link); }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: .5rem; top: .5rem; background: #fff; padding: .3rem; }
.top { display: flex; align-items: center; gap: 1rem; padding: .6rem 1.5rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 1.1rem; text-decoration: none; color: var(--fg); }
.who { margin-left: auto; color: var(--muted); }
main { padding: 1rem 1.5rem 3rem; max-width: 90rem; }
h1 { font-size: 1.35rem; margin: .2rem 0 .8rem; } h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
form.signin { display: grid; gap: .5rem; max-width: 34rem; }
label { font-weight: 600; }
input, select, button { font: inherit; padding: .35rem .55rem; border: 1px solid #8a929b; border-radius: 4px; background: #fff; color: var(--fg); }
button { background: #f3f4f6; cursor: pointer; } button:disabled { cursor: default; color: var(--muted); }
button.primary { background: #0b57d0; border-color: #0b57d0; color: #fff; }
.controls, .actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin: .5rem 0 .8rem; }
.controls div { display: grid; gap: .15rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding: .2rem 0; }
th, td { text-align: left; padding: .35rem .55rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #f6f7f9; } tbody th { font-weight: 600; }
.badge { font-weight: 700; } .ready { color: var(--ok); } .wait { color: var(--wait); } .failure { color: var(--bad); }
.msg, .muted { color: var(--muted); overflow-wrap: anywhere; }
.alert { color: var(--bad); font-weight: 600; min-height: 1.2em; }
.status { min-height: 1.2em; }
.pager { display: flex; gap: .6rem; align-items: center; margin-top: .6rem; }
pre.diff { background: #f6f7f9; border: 1px solid var(--line); padding: .5rem; overflow-x: auto; font-size: 12.5px; }
.add { color: var(--ok); } .del { color: var(--bad); }
code { font-size: 12.5px; }
`;
