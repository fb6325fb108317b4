/// The member's history and plans pages (`HouseholdWeb+Own`), in the layout of `WebTemplates`.
extension WebTemplates {
    static let history = #"""
{{<layout}}{{$body}}
<h1>History</h1>
<div class="numbers">{{#stats}}<div class="stats"><span class="muted">{{title}}</span><b>{{protected}} protected</b>
{{urges}} urges, {{resisted}} resisted · open {{open}} · earned {{earned}}, spent {{spent}} · {{peeks}} peeks, {{tokens}} tokens</div>{{/stats}}</div>
<h2>Your credit</h2>
{{^batches}}<p class="muted">No credit held right now.</p>{{/batches}}
<ul>{{#batches}}<li class="batch">{{left}} · {{origin}}{{#earnedOn}} of {{earnedOn}}{{/earnedOn}}{{#expires}} · {{expires}}{{/expires}}</li>{{/batches}}</ul>
<h2>Schedules</h2>
{{^schedules}}<p class="muted">No schedules.</p>{{/schedules}}
<ul>{{#schedules}}<li class="schedule"><strong>{{name}}</strong> · {{kind}} {{from}}–{{to}} {{days}} · {{entries}}{{^enabled}} (off){{/enabled}}{{#reason}} · <span class="reason">“{{reason}}”</span>{{/reason}}</li>{{/schedules}}</ul>
<details><summary>Services and their state now</summary>
<ul>{{#services}}<li class="service" data-id="{{id}}">{{name}} · <span class="state {{state}}">{{state}}</span></li>
{{/services}}</ul></details>
<h2>The last {{days}} days</h2>
<p class="row">{{#spans}}{{#current}}<strong>{{days}} days</strong>{{/current}}{{^current}}<a href="/history?days={{days}}">{{days}} days</a>{{/current}} {{/spans}}· <a href="/export.csv" download>Download all as CSV</a></p>
{{^events}}<p class="muted">Nothing happened yet.</p>{{/events}}
<ul>{{#events}}<li class="event" data-kind="{{kind}}"><span class="muted">{{time}}</span> {{message}}</li>{{/events}}</ul>
{{/body}}{{/layout}}
"""#

    static let plans = #"""
{{<layout}}{{$body}}
<h1>Plans</h1>
<p class="muted">Shown before any bypass: what you will do instead.</p>
{{#plans}}<div class="card plan" data-id="{{id}}"><strong>When {{when}}</strong>, I will {{then}} <span class="muted">· {{shown}}</span>
<form method="post" action="/plans/archive" style="display:inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="id" value="{{id}}"><button class="quiet" type="submit">Archive</button></form></div>{{/plans}}
{{#hasArchived}}<details><summary>Archived plans</summary><ul>{{/hasArchived}}{{#archived}}<li class="plan archived" data-id="{{id}}">When {{when}}, I will {{then}} <span class="muted">· {{shown}}</span></li>{{/archived}}{{#hasArchived}}</ul></details>{{/hasArchived}}
<form method="post" action="/plans" class="card"><input type="hidden" name="csrf" value="{{csrf}}">
<label>When… <input type="text" name="when" placeholder="I'm bored after dinner" maxlength="200" required></label>
<label>I will… <input type="text" name="then" placeholder="take the dog out" maxlength="200" required></label>
<button type="submit">Add a plan</button></form>
<h2>Alternatives</h2>
<ul>{{#alternatives}}<li class="alternative">{{text}}</li>{{/alternatives}}</ul>
<form method="post" action="/alternatives" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
<label class="inline">Alternative <input type="text" name="text" placeholder="call a friend" maxlength="200" required></label><button type="submit">Add</button></form>
<h2>Focus</h2>
<p class="muted">Blocks now, for as long as you say. A focus session cannot be ended early, you included, and what it names cannot be unblocked until it ends; peeks, your credit and tokens still open an entry for a while, as under any block.</p>
<form method="post" action="/focus" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
<label class="inline">Minutes <input type="number" name="minutes" min="1" max="10080" value="60"></label>
<label class="inline">Entries <input type="text" name="entries" placeholder="all if empty"></label><label class="inline">Reason <input type="text" name="reason" placeholder="optional" maxlength="200"></label>
<button type="submit">Focus</button></form>
{{/body}}{{/layout}}
"""#
}
