extension WebTemplates {
    /// One profile's pause (SPEC §5a) with the owner's Pause or Resume button, and its daily
    /// allowances with what is left today, each with a Clear button, and a form that sets one, folded
    /// like the profile's other forms (SPEC §4a); a partial of `owner` and, without the buttons, of `member`.
    static let supervision = #"""
<div class="supervision">{{#paused}}<div class="card refusal pause"><strong>Paused until {{until}}</strong>{{#reason}} · “{{reason}}”{{/reason}}
{{#supervising}}<form method="post" action="/owner/resume" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}"><button type="submit">Resume now</button></form>{{/supervising}}</div>{{/paused}}
{{^paused}}{{#supervising}}<form method="post" action="/owner/pause" class="row pause"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}">
<label class="inline">Pause for <input type="number" name="minutes" min="1" max="10080" value="45"> min</label><label class="inline">Reason <input type="text" name="reason" placeholder="e.g. dinner" maxlength="200"></label><button type="submit">Pause</button></form>{{/supervising}}{{/paused}}
{{#allowances}}<div class="allowance muted">Daily allowance: {{words}} · {{left}}{{#supervising}} <form method="post" action="/owner/allowance/clear" style="display:inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}"><input type="hidden" name="entries" value="{{entries}}"><button class="quiet" type="submit">Clear</button></form>{{/supervising}}</div>{{/allowances}}
{{#supervising}}<details class="forms"><summary>Set a daily allowance</summary><form method="post" action="/owner/allowance" class="row allowance-set"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}">
<label class="inline">Daily allowance <input type="number" name="minutes" min="1" max="1440" value="60" required> min</label><label class="inline">for <input type="text" name="entries" placeholder="any entry" maxlength="400"></label><label class="inline">on <select name="days"><option value="daily">every day</option><option value="weekdays">weekdays</option><option value="weekends">weekends</option></select></label><button type="submit">Set allowance</button></form></details>{{/supervising}}</div>
"""#
}
