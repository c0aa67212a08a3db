//! c[i][j] = a[i] · b[j], one step per (i, j): `cargo run -p herd-flow --example outer_product [n]`.

use herd_flow::{Graph, StepError};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(64), |a| a.parse())?;
    let g = Graph::new("outer_product");
    let a = g.items::<usize, f64>("a");
    let b = g.items::<usize, f64>("b");
    let c = g.items::<(usize, usize), f64>("c");
    let ij = g.tags::<(usize, usize)>("ij");
    let (a2, b2, c2) = (a.clone(), b.clone(), c.clone());
    let mul = g.steps("mul", move |&(i, j): &(usize, usize), ctx| -> Result<(), StepError> {
        let v = *ctx.get(&a2, &i)? * *ctx.get(&b2, &j)?;
        ctx.put(&c2, (i, j), v)?;
        Ok(())
    });
    ij.prescribes(&mul);
    for i in 0..n {
        a.put(i, i as f64)?;
        b.put(i, 1.0 / (i as f64 + 1.0))?;
    }
    for i in 0..n {
        for j in 0..n {
            ij.put((i, j));
        }
    }
    let s = g.wait()?;
    let trace: f64 = (0..n).map(|i| *c.get(&(i, i)).expect("computed")).sum();
    println!("{n}×{n} outer product: trace {trace:.4}; {} steps, {} requeued", s.executed, s.requeued);
    Ok(())
}
