extension WebTemplates {
    /// One profile's pause (SPEC §5a) with the owner's Pause or Resume button, and its daily
    /// allowances with what is left today (SPEC §4a); a partial of `owner`.
    static let supervision = #"""
<div class="supervision">{{#paused}}<div class="card refusal pause"><strong>Paused until {{until}}</strong>{{#reason}} · “{{reason}}”{{/reason}}
{{#supervising}}<form method="post" action="/owner/resume" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}"><button type="submit">Resume now</button></form>{{/supervising}}</div>{{/paused}}
{{^paused}}{{#supervising}}<form method="post" action="/owner/pause" class="row pause"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="profile" value="{{name}}">
<label class="inline">Pause for <input type="number" name="minutes" min="1" max="10080" value="45"> min</label><label class="inline">Reason <input type="text" name="reason" placeholder="e.g. dinner" maxlength="200"></label><button type="submit">Pause</button></form>{{/supervising}}{{/paused}}
{{#allowances}}<div class="allowance muted">Daily allowance: {{words}} · {{left}}</div>{{/allowances}}</div>
"""#
}
