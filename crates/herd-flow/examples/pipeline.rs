//! A producer–consumer pipeline with tags put on the fly and get-counts freeing the
//! intermediate items: `cargo run -p herd-flow --example pipeline [n]`.

use herd_flow::{Discipline, Graph, StepError};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args().nth(1).map_or(Ok(10_000), |a| a.parse())?;
    let g = Graph::builder().name("pipeline").discipline(Discipline::OnTheFly).build();
    let raw = g.items::<u64, Vec<u64>>("raw").with_get_count(|_| 1);
    let sums = g.items::<u64, u64>("sum");
    let produce = g.tags::<u64>("produce");
    let consume = g.tags::<u64>("consume");
    let (r1, c1) = (raw.clone(), consume.clone());
    let producer = g.steps("producer", move |&i: &u64, ctx| -> Result<(), StepError> {
        ctx.put(&r1, i, (0..64).map(|k| i * k).collect())?;
        ctx.put_tag(&c1, i); // the consumer's tag, once its input exists
        Ok(())
    });
    let (r2, s2) = (raw.clone(), sums.clone());
    let consumer = g.steps("consumer", move |&i: &u64, ctx| -> Result<(), StepError> {
        let v = ctx.get(&r2, &i)?;
        ctx.put(&s2, i, v.iter().sum())?;
        Ok(())
    });
    produce.prescribes(&producer);
    consume.prescribes(&consumer);
    (0..n).for_each(|i| produce.put(i));
    let s = g.wait()?;
    let total: u64 = (0..n).map(|i| *sums.get(&i).expect("computed")).sum();
    println!(
        "{n} items: total {total}; {} steps, {} requeued; {} raw items still held",
        s.executed,
        s.requeued,
        raw.len()
    );
    Ok(())
}
