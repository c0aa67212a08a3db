//! Placement: which place each participant of a region runs on, which PU the
//! master is pinned to, and in which order the master wakes the others.
//!
//! The rules (hardware-aware-thread-affinity.txt §3; atlas paper §II):
//! * the master (participant 0) is pinned to the first place, a known PU, and by
//!   default no other participant shares that place;
//! * `close` gives participant `i` place `i`; `spread` spaces the participants
//!   evenly over the places; with more participants than places, consecutive
//!   participants share a place (OpenMP's rule);
//! * `HERD_RESERVE=k` removes the last `k` cores from the places, leaving them to
//!   the OS (copy-pack-overlap-blue-horizon.txt §7);
//! * the wake order is most distant first ([`crate::topology::Distance`] from the
//!   master's PU), the master's own share last (master-last dispatch).

use crate::config::{Bind, Dispatch};
use crate::topology::{Distance, Place, PlacesSpec, Topology};
use crate::{Error, Result};
use serde::Serialize;

/// The resolved layout of a pool.
#[derive(Clone, Debug, Serialize)]
pub struct Placement {
    /// Participants in a region, master included.
    pub num_threads: usize,
    /// The places after `HERD_RESERVE` was applied.
    pub places: Vec<Place>,
    /// For each participant (0 = master), the index of its place in `places`.
    pub place_of: Vec<usize>,
    /// Whether threads are actually bound (false when `HERD_BIND=false`, for a
    /// dispatch strategy without affinity, or on a synthetic topology).
    pub bound: bool,
    /// Participants other than the master, in the order the master signals them.
    pub wake_order: Vec<usize>,
    /// For each participant, its distance from the master's PU.
    pub distance_from_master: Vec<Distance>,
    /// More runnable threads than usable PUs: waiting never spins.
    pub oversubscribed: bool,
    /// Distinct PUs the participants' places cover: how many participants
    /// can run at once.
    pub usable_pus: usize,
    /// Cores left idle for the OS.
    pub reserved_cores: Vec<usize>,
    /// Human-readable remarks about decisions taken (shown by `herd topo`).
    pub notes: Vec<String>,
}

/// Inputs of [`plan`], already validated.
#[derive(Clone, Debug)]
pub struct PlacementRequest<'a> {
    /// `HERD_NUM_THREADS`, or `None` for one per place.
    pub num_threads: Option<usize>,
    /// `HERD_PLACES`, or `None` for `threads`.
    pub places: Option<&'a PlacesSpec>,
    /// `HERD_BIND`.
    pub bind: Bind,
    /// `HERD_DISPATCH`.
    pub dispatch: Dispatch,
    /// `HERD_RESERVE`.
    pub reserve: usize,
}

impl Placement {
    /// The representative PU (index into [`Topology::pus`]) of participant `i`:
    /// the first PU of its place.
    pub fn pu_of(&self, i: usize) -> usize {
        self.places[self.place_of[i]].pus[0]
    }

    /// The PUs participant `i` is bound to (its whole place).
    pub fn pus_of(&self, i: usize) -> &[usize] {
        &self.places[self.place_of[i]].pus
    }

    /// The master's PU (index into [`Topology::pus`]).
    pub fn master_pu(&self) -> usize {
        self.pu_of(0)
    }
}

/// Lays out a pool on `topo`.
pub fn plan(topo: &Topology, req: &PlacementRequest<'_>) -> Result<Placement> {
    let mut notes = Vec::new();
    let mut places = match req.places {
        Some(spec) => spec.resolve(topo)?,
        None => topo.pus().iter().map(|p| Place { pus: vec![p.index] }).collect(),
    };
    if places.is_empty() {
        return Err(Error::Placement("no usable place".into()));
    }

    // Reserve the last `reserve` cores for the OS.
    let mut cores: Vec<usize> = topo.pus().iter().map(|p| p.core).collect();
    cores.dedup();
    let reserved_cores: Vec<usize> = if req.reserve == 0 {
        Vec::new()
    } else if req.reserve >= cores.len() {
        return Err(Error::invalid(
            "HERD_RESERVE",
            &req.reserve.to_string(),
            format!("fewer cores than the {} usable ones", cores.len()),
        ));
    } else {
        cores[cores.len() - req.reserve..].to_vec()
    };
    if !reserved_cores.is_empty() {
        let pus = topo.pus();
        for place in &mut places {
            place.pus.retain(|&p| !reserved_cores.contains(&pus[p].core));
        }
        places.retain(|p| !p.pus.is_empty());
        if places.is_empty() {
            return Err(Error::Placement(format!("HERD_RESERVE={} leaves no place to run on", req.reserve)));
        }
        notes.push(format!("{} core(s) reserved for the OS: {:?}", reserved_cores.len(), reserved_cores));
    }

    let n = req.num_threads.unwrap_or(places.len());
    if n == 0 {
        return Err(Error::invalid("HERD_NUM_THREADS", "0", "a positive integer"));
    }
    let p = places.len();
    let place_of: Vec<usize> = (0..n)
        .map(|i| match req.bind {
            Bind::Spread => i * p / n,
            _ if n <= p => i,
            _ => i * p / n,
        })
        .collect();

    let bound = req.bind != Bind::False && req.dispatch.affinity() && !topo.is_synthetic();
    if topo.is_synthetic() {
        notes.push("synthetic topology: threads are not bound".into());
    } else if !bound {
        notes.push(format!("threads are not bound (HERD_BIND={:?}, dispatch {})", req.bind, req.dispatch));
    }

    // Distinct PUs: places may overlap (e.g. `{0,1}:2:1`).
    let mut distinct: Vec<usize> = places.iter().flat_map(|pl| pl.pus.iter().copied()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let usable_pus = distinct.len().max(1);
    // Under non-master-last strategies the master only waits (asleep, like the
    // paper's master blocked in a join) while n other threads run the shares.
    let runnable = n;
    let oversubscribed = runnable > usable_pus;
    if oversubscribed {
        notes.push(format!(
            "oversubscribed: {runnable} runnable threads on {usable_pus} usable PUs; waiting never spins: \
             it yields the CPU while yielding pays off (adaptively, per thread), then sleeps"
        ));
    }

    let master_pu = places[place_of[0]].pus[0];
    let distance_from_master: Vec<Distance> =
        (0..n).map(|i| topo.distance(master_pu, places[place_of[i]].pus[0])).collect();
    let mut wake_order: Vec<usize> = (1..n).collect();
    if req.dispatch.master_last() {
        // Most distant first; among equals, later places first.
        wake_order.sort_by(|&a, &b| {
            distance_from_master[b]
                .cmp(&distance_from_master[a])
                .then(place_of[b].cmp(&place_of[a]))
                .then(b.cmp(&a))
        });
    }

    Ok(Placement {
        num_threads: n,
        places,
        place_of,
        bound,
        wake_order,
        distance_from_master,
        oversubscribed,
        usable_pus,
        reserved_cores,
        notes,
    })
}
