//! fio's flow control (fio's flow.c), in virtual time. Every job with a flow weight
//! (`flow=`) joins its `flow_id`'s flow when the job file is read; it leaves when it ends,
//! taking its weight and its I/O count with it. Before each I/O a job checks its share of
//! the flow's I/Os (its count over the flow's count, which starts at 1) against its share of
//! the flow's weight: over it, the job is held (with `flow_sleep`: its I/Os in flight
//! complete, then it waits that long and checks again; without: it checks again when
//! another job of the flow issues or ends); otherwise the I/O counts to the job and the flow.

/// Per flow: (flow_id, I/Os counted, total weight of its jobs).
pub struct Flows {
    flows: Vec<(u32, u64, u64)>,
    /// Per job (index into the specs): its flow, if it has a weight and has not left;
    /// its weight; its I/Os counted.
    member: Vec<Option<usize>>,
    weight: Vec<u64>,
    count: Vec<u64>,
}

impl Flows {
    /// Every job's (weight, flow_id), in the specs' order.
    pub fn new(jobs: &[(u32, u32)]) -> Flows {
        let mut flows: Vec<(u32, u64, u64)> = vec![];
        let member = jobs
            .iter()
            .map(|&(w, id)| {
                (w > 0).then(|| {
                    let f = flows.iter().position(|f| f.0 == id).unwrap_or_else(|| {
                        flows.push((id, 1, 0));
                        flows.len() - 1
                    });
                    flows[f].2 += w as u64;
                    f
                })
            })
            .collect();
        Flows {
            flows,
            member,
            weight: jobs.iter().map(|j| j.0 as u64).collect(),
            count: vec![0; jobs.len()],
        }
    }

    /// The flow job `i` belongs to now.
    pub fn of(&self, i: usize) -> Option<usize> {
        self.member[i]
    }

    /// fio's flow_threshold_exceeded without the count: is job `i` over its share?
    pub fn held(&self, i: usize) -> bool {
        let Some(f) = self.member[i] else {
            return false;
        };
        let (_, n, w) = self.flows[f];
        self.count[i] as f64 / n as f64 > self.weight[i] as f64 / w as f64
    }

    /// Job `i` issues one I/O: it counts to the job and to its flow.
    pub fn issued(&mut self, i: usize) {
        if let Some(f) = self.member[i] {
            self.flows[f].1 += 1;
            self.count[i] += 1;
        }
    }

    /// Job `i` ends (fio's flow_exit_job): its weight and its I/Os leave the flow.
    /// The flow it left, if any.
    pub fn exit(&mut self, i: usize) -> Option<usize> {
        let f = self.member[i].take()?;
        self.flows[f].1 -= self.count[i];
        self.flows[f].2 -= self.weight[i];
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs that try to issue in turn: how many each issued.
    fn turns(f: &mut Flows, jobs: usize, tries: usize) -> Vec<u64> {
        let mut n = vec![0; jobs];
        for t in 0..tries {
            let i = t % jobs;
            if !f.held(i) {
                f.issued(i);
                n[i] += 1;
            }
        }
        n
    }

    #[test]
    fn weights_8_and_1_issue_8_to_1() {
        let mut f = Flows::new(&[(8, 0), (1, 0)]);
        let n = turns(&mut f, 2, 90_000);
        assert!((n[0] as f64 / n[1] as f64 - 8.0).abs() < 0.01, "{n:?}");
    }

    #[test]
    fn flows_of_other_ids_and_jobs_without_weight_are_free() {
        let mut f = Flows::new(&[(8, 0), (1, 1), (0, 0)]);
        assert_eq!(turns(&mut f, 3, 3000), vec![1000, 1000, 1000]);
    }

    #[test]
    fn a_job_that_ends_takes_its_weight_and_count_with_it() {
        let mut f = Flows::new(&[(1, 0), (1, 0)]);
        turns(&mut f, 2, 10);
        f.issued(0);
        f.issued(0);
        assert!(f.held(0)); // 7 of the flow's 13 > 1/2 (5 each, and the flow's first 1)
        assert_eq!(f.exit(1), Some(0));
        assert!(!f.held(0)); // alone: 7 of 8 <= 1
        assert_eq!(f.exit(1), None);
    }
}
