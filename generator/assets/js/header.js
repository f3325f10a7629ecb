/* course.js: progressive enhancement of the course's figures (see CONTRACT.md).
 *
 * Plain ES2017, no build step, no dependencies except the global `Plotly` (plotly-cartesian.min.js, loaded
 * before this file). Works from file://: no fetch(); a trace's parts load by injecting
 * <script src="<data-parts>/<layer>-<head>.js"> when a head is first shown (weights.js for "All heads"). Every token is data: it reaches the DOM through textContent only,
 * and Plotly (which reads <br>, <b> ... in strings) gets it escaped with &lt; &gt; &amp;.
 *
 * Globals: traces, trace, softmax(array), courseReady(), course (setState, figures, paintedAt),
 * tokens (the tokens figure's current sentence), embedding (the embedding figure's data).
 * Optional, set before this file loads: window.courseConfig = {idleParts: false} stops the
 * on-idle load of the shown heads' parts (every head's loads on courseReady(), t.load() or when a
 * "Code" tab opens; another head's when it is shown).
 *
 * One classic script (not an ES module: modules do not load from file://, and the one-file
 * chapters inline scripts as text), one closure. Its source is in parts, generator/assets/js/,
 * joined in the order js/ORDER lists (generator/render/script.py); each opens with its named numbers:
 *   core.js                      number format (as Python's), cell colours (colorscale.js), tokens, DOM, theme, page hooks
 *   traces.js                    the console's `traces`, parts loaded by <script>, schema-3 decoding
 *   table.js                     "Show as a table": the disclosure that keeps a plotted figure's table one click away
 *   view.js, heatmap.js          one attention panel, AttentionView: table, summary, top-3; its Plotly heatmap (HEATMAP)
 *   lines.js                     its lines view (LINES): Grid / Lines, one SVG line per (query, key); a phone's top-3 toggle
 *   minis.js                     its small multiples (MINIS)
 *   attention.js                 AttentionFigure: pickers, state, "All heads", the compare diff
 *   hash.js                      #fig-1:layer=3,head=3,token=6[,view=lines] (HASH_WRITE_DELAY)
 *   stepper.js, softmax.js, scoreboard.js, training.js (TRAINING, CHART_COLOURS)
 *   schedule.js                  first paint (course:painted), which plot is drawn when (LAZY)
 *   tabs.js, scroll-boxes.js     print labels, Code tabs load parts; keyboard stops for wide boxes
 *   sizes.js                     every off-screen block rendered once after the first paint: one page height
 *   plots.js                     chapters 1 and 2: the layout their plots share
 *   tokens.js, merges.js, embedding.js, layernorm.js, map.js (MAP)   one per chapter 1-2 kind
 *   init.js                      KINDS (every data-kind and what sets it up), init, the theme followed
 */
