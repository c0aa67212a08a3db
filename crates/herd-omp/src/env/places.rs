//! `OMP_PLACES` naming CPUs the process cannot use (outside its affinity
//! mask, or beyond the machine), handled as libgomp does: such CPUs are left
//! out of their places, places left empty are dropped, and the program goes
//! on with the rest. If no place is left, `OMP_PLACES` is ignored as if it
//! were unset (libgomp then also leaves `bind-var` to `OMP_PROC_BIND`). One
//! warning names what was dropped.
//!
//! Only explicit lists are filtered: the abstract names (`threads`, `cores`,
//! ...) are built from the usable CPUs already; an abstract count beyond what
//! exists (`cores(64)` on 16 cores) is cut to what exists, with a warning
//! (libgomp cuts it silently). `HERD_PLACES` is herd's own setting and stays
//! strict (an unusable CPU or a count too large is an error there).
//!
//! One difference: libgomp rejects the whole list (and binds nothing) when a
//! CPU number lies past its CPU set (the configured CPUs rounded up to 64);
//! herd drops that CPU like any other unusable one, so the outcome does not
//! depend on the machine's size.

use super::*;

/// The places of `spec` (given by the variable `var`) restricted to the
/// `usable` OS CPU numbers: the new list (`None` if no place is left) and a
/// warning, naming `var`, when anything was dropped.
pub fn usable_places(var: &str, spec: &PlacesSpec, usable: &[u32]) -> (Option<PlacesSpec>, Option<String>) {
    let PlacesSpec::Explicit(list) = spec else {
        return (Some(spec.clone()), None);
    };
    let mut dropped_cpus: Vec<u32> = Vec::new();
    let mut dropped_places: Vec<usize> = Vec::new();
    let mut kept: Vec<Vec<u32>> = Vec::new();
    for (i, place) in list.iter().enumerate() {
        let (ok, bad): (Vec<u32>, Vec<u32>) = place.iter().partition(|cpu| usable.contains(cpu));
        dropped_cpus.extend(bad);
        if ok.is_empty() {
            dropped_places.push(i);
        } else {
            kept.push(ok);
        }
    }
    if dropped_cpus.is_empty() && dropped_places.is_empty() {
        return (Some(spec.clone()), None);
    }
    dropped_cpus.sort_unstable();
    dropped_cpus.dedup();
    let cpus: Vec<usize> = dropped_cpus.iter().map(|&c| c as usize).collect();
    let mut usable_sorted: Vec<usize> = usable.iter().map(|&c| c as usize).collect();
    usable_sorted.sort_unstable();
    let mut why = format!(
        "{var} names CPU(s) {} that this process cannot use (usable: {})",
        crate::affinity_format::cpu_list(&cpus),
        crate::affinity_format::cpu_list(&usable_sorted)
    );
    if kept.is_empty() {
        why.push_str(&format!(
            "; none of its {} place(s) has a usable CPU, so {var} is ignored (as libgomp does)",
            list.len()
        ));
        return (None, Some(why));
    }
    why.push_str("; they are left out of their places");
    if !dropped_places.is_empty() {
        let nums: Vec<String> = dropped_places.iter().map(|i| i.to_string()).collect();
        why.push_str(&format!(
            ", and place(s) {} (numbered from 0), left empty, are dropped: {} of {} places remain",
            nums.join(","),
            kept.len(),
            list.len()
        ));
    }
    (Some(PlacesSpec::Explicit(kept)), Some(why))
}

impl OmpEnv {
    /// Fits `OMP_PLACES` to what this process can use on `topo` (see the
    /// module documentation); returns the warning to print, if any.
    pub fn fit_places(&mut self, topo: &herd::Topology) -> Option<String> {
        match self.places {
            Some(PlacesSpec::Explicit(_)) => {
                let usable: Vec<u32> = topo.pus().iter().map(|p| p.os_index).collect();
                self.keep_usable_places(&usable)
            }
            Some(PlacesSpec::Abstract(kind, Some(n))) => {
                let exist = PlacesSpec::Abstract(kind, None).resolve(topo).map_or(n, |p| p.len());
                (n > exist).then(|| {
                    self.places = Some(PlacesSpec::Abstract(kind, Some(exist)));
                    format!(
                        "{PLACES}={}({n}) asks for {n} places but only {exist} exist among the usable CPUs; using {exist}",
                        kind.name()
                    )
                })
            }
            _ => None,
        }
    }

    /// The variable the place list came from: `OMP_PLACES`, or
    /// `GOMP_CPU_AFFINITY` when [`parse_all`] made it from that.
    pub fn places_var(&self) -> &'static str {
        if self.places_from_cpu_affinity {
            CPU_AFFINITY
        } else {
            PLACES
        }
    }

    /// Restricts `OMP_PLACES` to the `usable` OS CPU numbers (see the module
    /// documentation); returns the warning to print, if any.
    pub fn keep_usable_places(&mut self, usable: &[u32]) -> Option<String> {
        let spec = self.places.take()?;
        let (places, warning) = usable_places(self.places_var(), &spec, usable);
        self.places = places;
        warning
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::test_support::*;
    use herd::topology::places::AbstractPlace;

    fn explicit(v: &str) -> PlacesSpec {
        one(PLACES, v).places.expect("places")
    }

    #[test]
    fn usable_places_are_kept_unchanged() {
        let s = explicit("{0,1},{2}");
        assert_eq!(usable_places(PLACES, &s, &[0, 1, 2, 3]), (Some(s.clone()), None));
        let a = PlacesSpec::Abstract(AbstractPlace::Cores, Some(2));
        assert_eq!(usable_places(PLACES, &a, &[0]), (Some(a.clone()), None));
    }

    #[test]
    fn unusable_cpus_are_dropped_and_empty_places_too() {
        let (p, w) = usable_places(PLACES, &explicit("{0},{1000}"), &[0, 1]);
        assert_eq!(p, Some(PlacesSpec::Explicit(vec![vec![0]])));
        let w = w.expect("a warning");
        assert!(w.contains("CPU(s) 1000 ") && w.contains("usable: 0-1"), "{w}");
        assert!(w.contains("place(s) 1 ") && w.contains("1 of 2 places remain"), "{w}");

        let (p, w) = usable_places(PLACES, &explicit("{0,5,1},{6:2}"), &[0, 1, 2, 3]);
        assert_eq!(p, Some(PlacesSpec::Explicit(vec![vec![0, 1]])));
        let w = w.unwrap();
        assert!(w.contains("CPU(s) 5-7 "), "{w}");
    }

    #[test]
    fn shrunk_places_without_an_empty_one_say_so() {
        let (p, w) = usable_places(PLACES, &explicit("{0,9},{1}"), &[0, 1]);
        assert_eq!(p, Some(PlacesSpec::Explicit(vec![vec![0], vec![1]])));
        let w = w.unwrap();
        assert!(w.contains("CPU(s) 9 ") && !w.contains("dropped:"), "{w}");
    }

    #[test]
    fn no_place_left_ignores_the_variable() {
        let mut env = one(PLACES, "{7},{8:2}");
        let w = env.keep_usable_places(&[0, 1]).expect("a warning");
        assert_eq!(env.places, None);
        assert!(w.contains("CPU(s) 7-9 ") && w.contains("is ignored"), "{w}");
        // Binding then follows OMP_PROC_BIND alone (false by default), as libgomp.
        assert_eq!(DisplayIcvs::from_omp(&env, 2).proc_bind, vec![ProcBind::False]);
    }

    #[test]
    fn cpu_affinity_warnings_name_it() {
        let mut env = one(CPU_AFFINITY, "0 5");
        let w = env.keep_usable_places(&[0, 1]).expect("a warning");
        assert!(w.starts_with("GOMP_CPU_AFFINITY names CPU(s) 5 "), "{w}");
        assert_eq!(env.places, Some(PlacesSpec::Explicit(vec![vec![0]])));
        let mut env = one(CPU_AFFINITY, "7");
        let w = env.keep_usable_places(&[0, 1]).expect("a warning");
        assert!(w.contains("so GOMP_CPU_AFFINITY is ignored"), "{w}");
    }

    #[test]
    fn unset_places_stay_unset() {
        let mut env = OmpEnv::default();
        assert_eq!(env.keep_usable_places(&[0]), None);
        assert_eq!(env.places, None);
    }
}
