"""fio's file formats, read and written without fio: job files (jobfile.py), its JSON and
json+ output (json_read.py reads a real run's, json_write.py writes a simulated run's; the
fields both use: fields.py), its normal text output (text_output.py), its latency bins
(plat.py), its bw/iops/lat/histogram logs (logs.py) and its iolog (iolog.py). Pure syntax
and serialization: what a job does, how fio is run and what a run measures live with the
simulator's compiler (fiojob/), the fio target (targets/fio/) and the tests."""
