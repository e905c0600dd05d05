package viewer

import (
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/convtrace/convtrace/store/page"
)

// phasePalette is the number of phase colours trace.css defines
// (.ph-0 … .ph-11): one pinned to each canonical phase, in
// page.CanonicalPhases order, the rest shared by other phases by hash.
const phasePalette = 12

// phaseClass is the CSS class colouring a phase: the same phase has the
// same colour on every trace and in every installation. Like
// providerClass it is one of a fixed set, never built from the name.
func phaseClass(phase string) string {
	key := page.PhaseKey(phase)
	if key == "" {
		return "ph-none"
	}
	if i := slices.Index(page.CanonicalPhases, key); i >= 0 {
		return "ph-" + strconv.Itoa(i)
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	fixed := len(page.CanonicalPhases)
	return "ph-" + strconv.Itoa(fixed+int(h.Sum32()%uint32(phasePalette-fixed)))
}

// phaseLegend is one phase of a trace's legend.
type phaseLegend struct {
	Name, Class string
}

// phaseLegends lists the phases of spans in page order (canonical first),
// each once, with its colour; spans without a phase come last.
func phaseLegends(spans []TraceSpan) []phaseLegend {
	written := map[string]string{}
	var firstSeen []string
	for _, sp := range spans {
		key := page.PhaseKey(sp.Phase)
		if _, ok := written[key]; !ok {
			written[key] = sp.Phase
			firstSeen = append(firstSeen, key)
		}
	}
	legends := make([]phaseLegend, 0, len(firstSeen))
	for _, key := range page.PhaseOrder(firstSeen) {
		if key != "" {
			legends = append(legends, phaseLegend{Name: page.PhaseName(key, written[key]), Class: phaseClass(key)})
		}
	}
	if _, ok := written[""]; ok {
		legends = append(legends, phaseLegend{Name: page.PhaseName("", ""), Class: phaseClass("")})
	}
	return legends
}
