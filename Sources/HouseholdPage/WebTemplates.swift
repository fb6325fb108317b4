import Mustache

/// The household page's templates (SPEC §9a), compiled into the binary: an installed helper has no
/// resource folder it could miss. Mustache escapes every `{{value}}` for HTML, so names, reasons
/// and notes people typed cannot inject markup. Mobile-first, one small inline style sheet, no
/// external assets; the only script is the exercise's timer, and the page works without it.
enum WebTemplates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in sources {
            do { try library.register(text, named: name) } catch { preconditionFailure("template \(name) does not parse: \(error)") }
        }
        return library
    }()

    static func render(_ name: String, _ object: Any) -> String {
        library.render(object, withTemplate: name) ?? "<!doctype html><title>Scroll Off</title><p>This page could not be drawn."
    }

    static let sources: [String: String] = [
        "layout": layout, "member": member, "moment": moment, "exercise": exercise, "outcome": outcome,
        "signin": signin, "owner": owner, "charts": charts, "history": history, "plans": plans,
        "supervision": supervision,
    ]

    /// SPEC §7: one profile's week as charts (`InsightCharts`, inline SVG already escaped there),
    /// the sentences built from the numbers, and the latest weekly digest.
    static let charts = #"""
<div class="card charts">{{#summary}}<p class="summary">{{.}}</p>{{/summary}}
<figure>{{{trendChart}}}<figcaption class="muted">Urges in the last 7 days; green: resisted</figcaption></figure>
<figure>{{{heatmapChart}}}<figcaption class="muted">Urges by hour of the day</figcaption></figure>
<figure>{{{topChart}}}<figcaption class="muted">Top entries by urges this week</figcaption></figure></div>
{{#digest}}<div class="card digest"><strong>Weekly digest, {{range}}</strong>{{#sentences}}<p>{{.}}</p>{{/sentences}}</div>{{/digest}}
"""#

    static let layout = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}} · Scroll Off</title>
<script src="/live.js" defer></script>
<style>
:root{color-scheme:light dark;--fg:#1d2433;--muted:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#dfe3ea;--accent:#2f6f5e;--on-accent:#fff;--warn:#8a4b08;--bad:#9b2c2c}
@media (prefers-color-scheme:dark){:root{--fg:#e8ebf1;--muted:#a2aaba;--bg:#14171c;--card:#1d2129;--line:#313744;--accent:#7cc4ad;--on-accent:#10201b;--warn:#e7b46b;--bad:#f29b9b}}
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;justify-content:space-between;align-items:center;gap:.5rem;padding:.75rem;border-bottom:1px solid var(--line);background:var(--card);white-space:nowrap}
header a{color:var(--accent);text-decoration:none;margin-left:.6rem}header nav{font-size:.9rem}main{max-width:36rem;margin:0 auto;padding:1rem}
h1{font-size:1.25rem;margin:.25rem 0 1rem}h2{font-size:1.05rem;margin:1.25rem 0 .5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:.85rem 1rem;margin:.6rem 0}
.numbers{display:grid;grid-template-columns:repeat(2,1fr);gap:.5rem}.numbers div{background:var(--card);border:1px solid var(--line);border-radius:.6rem;padding:.5rem .7rem}
.numbers b{display:block;font-size:1.2rem}.muted{color:var(--muted)}.state{font-weight:600}.state.blocked,.state.curfew{color:var(--bad)}.state.open{color:var(--accent)}
.reason{font-style:italic}.bar{display:flex;height:.6rem;border-radius:.3rem;overflow:hidden;background:var(--line);margin:.35rem 0}.bar .protected{background:var(--accent)}.bar .open{background:var(--warn)}.row{display:flex;flex-wrap:wrap;gap:.4rem;margin-top:.5rem;align-items:center}
button,.button{font:inherit;border:1px solid var(--accent);background:var(--accent);color:var(--on-accent);border-radius:.5rem;padding:.45rem .8rem;text-decoration:none;display:inline-block;cursor:pointer}
button.quiet,.button.quiet{background:transparent;color:var(--accent)}input,textarea,select{font:inherit;padding:.4rem;border:1px solid var(--line);border-radius:.4rem;background:var(--bg);color:var(--fg)}
input[type=number]{width:4.5rem}label{display:block;margin:.4rem 0}.flash{border-color:var(--accent)}.refusal{border-color:var(--bad)}.refusal strong{color:var(--bad)}
ol.steps li{margin:.35rem 0;opacity:.75}ol.steps li.now{opacity:1;font-weight:600}ol.steps li.done{opacity:.8}#left{font-size:2.2rem;font-variant-numeric:tabular-nums}
svg.chart{display:block;max-width:100%;height:auto}svg.chart text{fill:currentColor}figure{margin:.6rem 0}
footer{max-width:36rem;margin:1.5rem auto;padding:0 1rem;font-size:.85rem;color:var(--muted)}
label.inline{display:inline-block;margin:.2rem .3rem .2rem 0}details.forms>summary,details.week>summary{cursor:pointer;color:var(--accent);margin:.5rem 0}
</style>
</head>
<body>
<header><strong>Scroll Off</strong><nav>{{#owner}}<a href="/owner">Household</a>{{/owner}}<a href="/">This device</a><a href="/history">History</a><a href="/plans">Plans</a>{{^owner}}<a href="/signin">Sign in</a>{{/owner}}</nav></header>
<main>
{{#flash}}<div class="card flash" role="status">{{flash}}</div>{{/flash}}
{{$body}}{{/body}}
</main>
<footer>{{#owner}}Signed in as {{owner}}. <form method="post" action="/signout" style="display:inline"><input type="hidden" name="csrf" value="{{csrf}}"><button class="quiet" type="submit">Sign out</button></form>{{/owner}}</footer>
</body>
</html>
"""#

    static let member = #"""
{{<layout}}{{$body}}
<h1>{{profileTitle}}</h1>
{{#strictUntil}}<div class="card refusal"><strong>Strict curfew until {{strictUntil}}.</strong> Only essential services answer.</div>{{/strictUntil}}
<div class="numbers">
<div><span class="muted">Balance</span><b id="balance">{{balance}}</b></div>
<div><span class="muted">Earned today</span><b>{{earnedToday}}</b></div>
<div><span class="muted">Next credit</span><b>{{nextCredit}}</b></div>
<div><span class="muted">Streak</span><b>{{streak}}</b></div>
<div><span class="muted">Peeks left today</span><b id="peeks">{{peeksLeft}}</b></div>
<div><span class="muted">Tokens this month</span><b id="tokens">{{tokensLeft}}</b></div>
</div>
{{>supervision}}
{{#asking}}<section id="ask"><h2>Ask for time</h2>
{{#requests}}<div class="card request" data-status="{{status}}">{{minutes}} min{{#note}} · “{{note}}”{{/note}} · <strong>{{statusWords}}</strong>{{#answerNote}} · “{{answerNote}}”{{/answerNote}}</div>{{/requests}}
<form method="post" action="/ask" class="card"><input type="hidden" name="csrf" value="{{csrf}}">
<label>Minutes <input type="number" name="minutes" min="1" max="1440" value="15"></label>
<label>Note for an owner <input type="text" name="note" maxlength="200" placeholder="what it is for" required></label>
<button type="submit">Ask</button></form></section>
{{/asking}}
{{#hasFocus}}<div id="focus">{{#focus}}<div class="card focus"><strong>Focus until {{until}}</strong>: {{entries}} {{verb}} blocked{{#reason}} · <span class="reason">“{{reason}}”</span>{{/reason}}</div>{{/focus}}
<p class="muted">{{focusAllows}}</p></div>{{/hasFocus}}
{{#hasGrants}}<h2>Open now</h2>{{/hasGrants}}
{{#grants}}<div class="card" data-left="{{secondsLeft}}"><span class="state open">{{entry}}</span> is open until {{until}}{{#task}} · task “{{task}}”{{/task}}
<form method="post" action="/stop" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="entry" value="{{entry}}"><button type="submit">Stop now</button></form></div>{{/grants}}
<h2>Your entries</h2>
{{^entries}}<p class="muted">Nothing is blocked for this device.</p>{{/entries}}
{{#entries}}<div class="card entry" id="entry-{{id}}" data-state="{{state}}"><div><strong>{{id}}</strong> · <span class="state {{state}}">{{stateWords}}</span>{{#until}} {{until}}{{/until}}{{#allowanceLeft}} · <span class="allowance">{{allowanceLeft}}</span>{{/allowanceLeft}}</div>
{{#reason}}<div class="reason">“{{reason}}”</div>{{/reason}}
{{#bypassable}}<div class="row">
{{#peekable}}<a class="button" href="/moment?action=peek&amp;entry={{id}}">Peek</a>{{/peekable}}{{#rests}}<span class="muted rests">{{rests}}</span>{{/rests}}
{{#usable}}<form method="get" action="/moment" class="row"><input type="hidden" name="action" value="use"><input type="hidden" name="entry" value="{{id}}"><input type="number" name="minutes" min="1" max="1440" value="10" aria-label="minutes (empty: until you stop)"><button class="quiet" type="submit">Use minutes</button></form>{{/usable}}
{{#tokenable}}<a class="button quiet" href="/moment?action=token&amp;entry={{id}}">Token</a>{{/tokenable}}
</div>{{/bypassable}}</div>{{/entries}}
<h2>How it is going</h2>
{{#insights}}<div class="card insight"><strong>{{title}}</strong>: {{urges}}{{resisted}} · protected {{protected}} · open {{open}}
<div class="bar" role="img" aria-label="protected {{protected}}, open {{open}}"><span class="protected" style="width:{{protectedPercent}}%"></span><span class="open" style="width:{{openPercent}}%"></span></div></div>{{/insights}}
{{#charts}}<h2>Your week</h2>{{>charts}}{{/charts}}
{{/body}}{{/layout}}
"""#

    static let moment = #"""
{{<layout}}{{$body}}
<h1>Before you open {{entry}}</h1>
{{#plan}}<div class="card"><strong>Your plan:</strong> when {{when}}, I will {{then}}.</div>{{/plan}}
{{^plan}}{{#plansNote}}<div class="card muted">{{plansNote}} See them on <a href="/plans">Plans</a>.</div>{{/plansNote}}{{^plansNote}}<div class="card muted">No plan yet. Add one on <a href="/plans">Plans</a>: what you will do instead, shown here next time.</div>{{/plansNote}}{{/plan}}
{{#hasAlternatives}}<div class="card"><strong>Instead, you could:</strong><ul>{{#alternatives}}<li>{{.}}</li>{{/alternatives}}</ul></div>{{/hasAlternatives}}
{{#unavailable}}<div class="card refusal"><strong>{{unavailable}}</strong>{{#asking}} <a class="button" href="/#ask">Ask for time</a>{{/asking}}</div>{{/unavailable}}
{{^unavailable}}<p>{{what}}</p>
{{#offerExercise}}<div class="card"><strong>Try this first:</strong> {{exerciseTitle}} ({{exerciseMinutes}} min). It is optional.
<div class="row"><a class="button" href="/exercise?{{query}}">Start the exercise</a>
<form method="post" action="/bypass" class="row"><input type="hidden" name="csrf" value="{{csrf}}">{{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}<input type="hidden" name="outcome" value="skipped"><label>What for? <input type="text" name="task" maxlength="{{maxTask}}" placeholder="optional, e.g. reply to Sam"></label><button class="quiet" type="submit">Skip it and {{verb}}</button></form></div></div>{{/offerExercise}}
{{^offerExercise}}<form method="post" action="/bypass" class="row"><input type="hidden" name="csrf" value="{{csrf}}">{{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}<label>What for? <input type="text" name="task" maxlength="{{maxTask}}" placeholder="optional, e.g. reply to Sam"></label><button type="submit">{{verbTitle}}</button></form>{{/offerExercise}}{{/unavailable}}
<p><a href="/">Not now</a></p>
{{/body}}{{/layout}}
"""#

    static let exercise = #"""
{{<layout}}{{$body}}
<h1>{{exerciseTitle}}</h1>
<p class="muted">Take {{exerciseMinutes}} minutes. There is nothing to get right.</p>
<div class="card" style="text-align:center"><span id="left" data-seconds="{{seconds}}">{{exerciseMinutes}}:00</span></div>
<ol class="steps" id="steps">{{#steps}}<li>{{.}}</li>{{/steps}}</ol>
<form method="post" action="/bypass" class="card"><input type="hidden" name="csrf" value="{{csrf}}">{{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}
<input type="hidden" name="outcome" id="outcome" value="completed">
<p id="done">Still want to {{verb}}?</p>
<label>What for? <input type="text" name="task" maxlength="{{maxTask}}" placeholder="optional, e.g. reply to Sam"></label>
<div class="row"><button type="submit" name="go" value="yes" id="go">Yes, {{verb}}</button><button class="quiet" type="submit" name="avoid" value="yes" id="avoid">No, I'll leave it</button></div></form>
<script>
(function(){var el=document.getElementById('left'),total=+el.dataset.seconds,left=total,steps=document.querySelectorAll('#steps li'),out=document.getElementById('outcome'),done=document.getElementById('done');
out.value='skipped';done.hidden=true;
function show(){var m=Math.floor(left/60),s=left%60;el.textContent=m+':'+(s<10?'0':'')+s;var i=Math.min(steps.length-1,Math.floor((total-left)*steps.length/total));
for(var j=0;j<steps.length;j++){steps[j].className=j==i?'now':(j<i?'done':'')}}
function tick(){show();if(left<=0){out.value='completed';done.hidden=false;return}left--;setTimeout(tick,1000)}tick();})();
</script>
{{/body}}{{/layout}}
"""#

    static let outcome = #"""
{{<layout}}{{$body}}
{{#refusal}}<div class="card refusal" data-rule="{{rule}}" data-opens-at="{{opensAt}}">{{#headline}}<strong>{{headline}}</strong>{{/headline}}<p>{{message}}</p>{{#reason}}<p class="reason">Your reason: “{{reason}}”</p>{{/reason}}{{#askForTime}}<p><a class="button" href="/#ask">Ask for time</a> An owner can give you minutes.</p>{{/askForTime}}</div>{{/refusal}}
{{#done}}<div class="card flash"><strong>{{done}}</strong>{{#detail}}<p>{{detail}}</p>{{/detail}}</div>{{/done}}
<p><a class="button" href="{{back}}">Back</a></p>
{{/body}}{{/layout}}
"""#

    static let signin = #"""
{{<layout}}{{$body}}
<h1>Owner sign-in</h1>
{{#error}}<div class="card refusal" role="alert"><strong>{{error}}</strong></div>{{/error}}
<form method="post" action="/signin" class="card"><input type="hidden" name="csrf" value="{{csrf}}">
<label>User name <input type="text" name="name" autocomplete="username" autocapitalize="none" value="{{name}}" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>
<p class="muted">Root sets an owner's password with <code>scrolloff-dns web passwd NAME</code>. This page is plain HTTP: use it only on a network you trust.</p>
{{/body}}{{/layout}}
"""#

    static let owner = #"""
{{<layout}}{{$body}}
<h1>Household</h1>
{{^profiles}}<p class="muted">No profile is yours to look after.</p>{{/profiles}}
{{#hasProfiles}}<section class="card" id="needs-answer"><h2>{{waitingWords}}</h2>
{{#waiting}}<div class="card request" data-id="{{id}}" data-profile="{{profile}}"><strong>{{who}} asks for {{minutes}} min</strong>{{#note}} · “{{note}}”{{/note}} <span class="muted">{{asked}}</span>
<form method="post" action="/owner/requests" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{profile}}"><input type="hidden" name="id" value="{{id}}">
<label class="inline">Note <input type="text" name="note" maxlength="200" placeholder="optional"></label><button type="submit" name="answer" value="approve">Approve</button><button class="quiet" type="submit" name="answer" value="decline">Decline</button></form></div>{{/waiting}}
{{#inCurfew}}<p class="curfew-now"><span class="state curfew">In curfew now</span> · {{.}}</p>{{/inCurfew}}{{^inCurfew}}<p class="muted">Nobody is in curfew now.</p>{{/inCurfew}}</section>{{/hasProfiles}}
{{#profiles}}<section class="card profile" id="profile-{{name}}"><h2>{{name}}</h2>
<div class="muted">Balance <b>{{balance}}</b> · earned today {{earnedToday}} · spent today {{spentToday}} · {{peeksLeft}} peeks, {{tokensLeft}} tokens left</div>
{{>supervision}}
<ul>{{#entries}}<li><strong>{{id}}</strong> · <span class="state {{state}}">{{stateWords}}</span>{{#until}} {{until}}{{/until}}{{#allowanceLeft}} · <span class="allowance">{{allowanceLeft}}</span>{{/allowanceLeft}}{{#reason}} · <span class="reason">“{{reason}}”</span>{{/reason}}
{{#unblockable}}<form method="post" action="/owner/unblock" style="display:inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{profile}}"><input type="hidden" name="entry" value="{{id}}"><button class="quiet" type="submit">Unblock</button></form>{{/unblockable}}</li>{{/entries}}</ul>
<details class="forms"><summary>Block, add a schedule{{#adjusting}}, grant time{{/adjusting}}</summary>
<form method="post" action="/owner/block" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}">
<label class="inline">Entry <input type="text" name="entry" placeholder="e.g. tiktok" required></label><label class="inline">Reason <input type="text" name="reason" placeholder="optional" maxlength="200"></label><button type="submit">Block</button></form>
<form method="post" action="/owner/schedules" class="row schedule"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}">
<label class="inline">Schedule <input type="text" name="name" placeholder="e.g. evenings" required></label><label class="inline">From <input type="time" name="from" required></label><label class="inline">To <input type="time" name="to" required></label><label class="inline">Days <input type="text" name="days" list="days-{{name}}" value="daily" size="10"></label><datalist id="days-{{name}}"><option value="daily"><option value="weekdays"><option value="weekends"></datalist>
<label class="inline">Entries <input type="text" name="entries" placeholder="e.g. tiktok,instagram"></label><label class="inline"><input type="checkbox" name="curfew"> curfew</label><label class="inline"><input type="checkbox" name="strict"> strict (all but the allow list)</label><label class="inline">Reason <input type="text" name="reason" placeholder="optional" maxlength="200"></label><button type="submit">Add schedule</button></form>
{{#adjusting}}<form method="post" action="/owner/adjust" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}">
<label class="inline">Grant or take <select name="sign"><option value="+">Grant</option><option value="-">Take</option></select></label><label class="inline">Minutes <input type="number" name="minutes" min="1" max="1440" value="15"></label>
<label class="inline">Note <input type="text" name="note" maxlength="200" required></label><button type="submit">Apply</button></form>{{/adjusting}}
</details>
<ul class="schedules">{{#schedules}}<li class="schedule" data-name="{{name}}"><strong>{{name}}</strong> · {{kind}} {{from}}–{{to}} {{days}} · {{entries}}{{#reason}} · <span class="reason">“{{reason}}”</span>{{/reason}}{{#locked}} · <span class="muted">{{locked}}</span>{{/locked}}
<form method="post" action="/owner/schedules/remove" style="display:inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{profile}}"><input type="hidden" name="name" value="{{name}}"><button class="quiet" type="submit">Remove</button></form></li>{{/schedules}}</ul>
{{#charts}}<details class="week"><summary>This week</summary>{{>charts}}</details>{{/charts}}
</section>{{/profiles}}
{{/body}}{{/layout}}
"""#
}
