/* course.js: progressive enhancement of the course's figures (see CONTRACT.md).
 *
 * Plain ES2017, no build step, no dependencies except the global `Plotly` (plotly-cartesian.min.js, loaded
 * before this file). Works from file://: no fetch(); heavy trace parts load by injecting
 * <script src="data-parts">. Every token is data: it reaches the DOM through textContent only,
 * and Plotly (which reads <br>, <b> ... in strings) gets it escaped with &lt; &gt; &amp;.
 *
 * Globals: traces, trace, softmax(array), courseReady(), course (setState, figures, paintedAt),
 * tokens (the tokens figure's current sentence), embedding (the embedding figure's data).
 * Optional, set before this file loads: window.courseConfig = {idleParts: false} stops the
 * on-idle load of heavy parts (they still load on courseReady() or when a "Code" tab opens).
 *
 * One classic script (not an ES module: modules do not load from file://, and the one-file
 * chapters inline scripts as text), in sections, each opening with its named numbers:
 *   constants and helpers        number format (as Python's), cell colours (colorscale.js), tokens
 *   traces and heavy parts       the console's `traces`, parts loaded by <script>, schema-3 decoding
 *   "Show as a table"            the disclosure that keeps a plotted figure's table one click away
 *   one attention panel          AttentionView: table, summary, top-3; Plotly (HEATMAP); small multiples (MINIS)
 *   attention / compare figure   AttentionFigure: pickers, state, "All heads", the compare diff
 *   URL hash                     #fig-1:layer=3,head=3,token=6 (HASH_WRITE_DELAY)
 *   stepper, softmax widget, scoreboard, training curve (TRAINING, CHART_COLOURS)
 *   first paint, lazy plots      course:painted, which plot is drawn when (LAZY)
 *   content tabs, scroll boxes   print labels, Code tabs load parts; keyboard stops for wide boxes
 *   chapters 1 and 2             tokens, merges, embedding, layernorm, map: shown, hidden and plotted
 *   init                         one KINDS registry: every figure found and enhanced, the theme followed
 *
 * The source is kept in parts (generator/assets/js/, joined in the order ORDER lists by
 * generator/render/script.py into one closure): one set of helpers for every figure kind.
 */
