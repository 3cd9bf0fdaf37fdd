"""Spanish, German, French, Portuguese and Italian templates for ``synthconv.py`` (``--langs es,de,fr,pt,it``):
the same facts, themes, filler and replies as its en/ru/zh ones, written as people write them (a question asks with a verb, a statement
often says it with a noun: "¿A qué ciudad se muda?" / "La mudanza está decidida").

A fact is ``(statements, question about {s}, values, small talk, question about oneself)``: the last one
because "{s}" cannot simply become "yo" / "ich" (the verb agrees with the person).
"""

from __future__ import annotations

NAMES = {"es": ["Lucía", "Mateo", "Carmen", "Diego", "Elena", "Pablo", "Sofía", "Javier"],
         "de": ["Anna", "Lukas", "Greta", "Jonas", "Lena", "Felix", "Mia", "Tobias"],
         "fr": ["Camille", "Hugo", "Léa", "Louis", "Chloé", "Jules", "Manon", "Théo"],
         "pt": ["Beatriz", "João", "Mariana", "Pedro", "Inês", "Tiago", "Rita", "Miguel"]}
MONTHS = {"es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"],
          "de": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"],
          "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"],
          "pt": ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"]}

FACTS = {
    "es": [
        (["¡Por fin nos trajimos del refugio un cachorro {v}!", "Adivina: ahora duerme en mi sofá un cachorro {v}, lo adoptamos."],
         "¿Qué raza de perro adoptó {s}?", ["beagle", "corgi", "husky", "caniche", "teckel"],
         ["El perro del vecino ladró otra vez toda la noche.", "Los perros del parque siempre están tan contentos."], "¿Qué raza de perro adopté?"),
        (["Voy a clases de {v} todos los martes por la tarde.", "Empecé a aprender {v} con una profesora, dos veces por semana."],
         "¿Qué instrumento estudia {s}?", ["piano", "violín", "guitarra", "violonchelo", "batería"],
         ["Hoy había un músico callejero cerca de la estación.", "Están renovando la sala de conciertos del centro."], "¿Qué instrumento estudio?"),
        (["En otoño nos mudamos a {v}, el trabajo nuevo está allí.", "La mudanza está decidida: {v} desde octubre."],
         "¿A qué ciudad se muda {s}?", ["Lisboa", "Toronto", "Melbourne", "Viena", "Osaka"],
         ["Las cajas son lo peor de cualquier mudanza.", "Mi primo cambió de ciudad dos veces el año pasado."], "¿A qué ciudad me mudo?"),
        (["Mi hermana acaba de tener una niña, la llamaron {v}.", "¡La pequeña {v} nació el domingo, ya soy tía!"],
         "¿Cómo se llama la sobrina de {s}?", ["Mila", "Sofía", "Ava", "Nora", "Lily"],
         ["Los bebés te cambian el sueño por completo.", "Mi hermana siempre quiso una familia grande."], "¿Cómo se llama mi sobrina?"),
        (["El fin de semana corrí mi primera {v}, todavía me duelen las piernas.", "¡Crucé la meta de la {v} por debajo de mi tiempo!"],
         "¿Qué carrera terminó {s}?", ["media maratón", "maratón", "carrera de 10 km", "carrera de montaña", "ultramaratón"],
         ["Correr con este calor es imposible.", "Me compré zapatillas nuevas pero chirrían."], "¿Qué carrera terminé?"),
        (["Por probar, llevo un mes con una dieta {v}.", "Sin carne ni lácteos: ahora sigo una dieta {v}."],
         "¿Qué alimentación sigue {s}?", ["vegana", "cetogénica", "paleo", "vegetariana", "mediterránea"],
         ["La panadería nueva tiene un pan increíble.", "Esta semana cociné pasta tres veces."], "¿Qué alimentación sigo?"),
        (["Conseguí trabajo nuevo en una startup, de {v}.", "Ayer firmé la oferta, voy a trabajar como {v}."],
         "¿Qué puesto aceptó {s}?", ["analista de datos", "enfermera", "arquitecta", "profesora", "cocinera"],
         ["Los lunes en el trabajo siempre son un caos.", "Mi jefe por fin aprobó las vacaciones."], "¿Qué puesto acepté?"),
        (["Pasamos las fiestas de senderismo en {v}, las vistas eran irreales.", "Acabo de volver de una semana de caminatas por {v}."],
         "¿Dónde hizo senderismo {s}?", ["la Patagonia", "Nepal", "Islandia", "los Alpes", "Escocia"],
         ["Mis botas se deshicieron después de esa ruta.", "En la montaña me siento diminuta."], "¿Dónde hice senderismo?"),
    ],
    "de": [
        (["Wir haben endlich einen kleinen {v}-Welpen aus dem Tierheim geholt!", "Rate mal: Auf meinem Sofa schläft jetzt ein {v}-Welpe, wir haben ihn adoptiert."],
         "Welche Hunderasse hat {s} adoptiert?", ["Beagle", "Corgi", "Husky", "Pudel", "Dackel"],
         ["Der Hund vom Nachbarn hat wieder die ganze Nacht gebellt.", "Die Hunde im Park sind immer so fröhlich."], "Welche Hunderasse habe ich adoptiert?"),
        (["Ich habe jeden Dienstagabend Unterricht: {v}.", "Ich lerne jetzt {v} bei einer Lehrerin, zweimal pro Woche."],
         "Welches Instrument lernt {s}?", ["Klavier", "Geige", "Gitarre", "Cello", "Schlagzeug"],
         ["Heute spielte ein Straßenmusiker am Bahnhof.", "Der Konzertsaal in der Innenstadt wird renoviert."], "Welches Instrument lerne ich?"),
        (["Im Herbst ziehen wir nach {v}, die neue Stelle ist dort.", "Der Umzug steht fest: {v} ab Oktober."],
         "In welche Stadt zieht {s}?", ["Lissabon", "Toronto", "Melbourne", "Wien", "Osaka"],
         ["Umzugskartons sind das Schlimmste an jedem Umzug.", "Mein Cousin hat letztes Jahr zweimal die Stadt gewechselt."], "In welche Stadt ziehe ich?"),
        (["Meine Schwester hat gerade ein Mädchen bekommen, sie heißt {v}.", "Die kleine {v} ist am Sonntag geboren, ich bin jetzt Tante!"],
         "Wie heißt die Nichte von {s}?", ["Mila", "Sophie", "Ava", "Nora", "Lily"],
         ["Babys verändern deinen Schlaf komplett.", "Meine Schwester wollte immer eine große Familie."], "Wie heißt meine Nichte?"),
        (["Am Wochenende bin ich meinen ersten {v} gelaufen, die Beine tun noch weh.", "Beim {v} bin ich unter meiner Zielzeit ins Ziel gekommen!"],
         "Welchen Lauf hat {s} geschafft?", ["Halbmarathon", "Marathon", "Zehn-Kilometer-Lauf", "Triathlon", "Ultramarathon"],
         ["Bei dieser Hitze kann man nicht laufen.", "Ich habe neue Turnschuhe gekauft, aber sie quietschen."], "Welchen Lauf habe ich geschafft?"),
        (["Als Experiment ernähre ich mich einen Monat lang {v}.", "Kein Fleisch, keine Milchprodukte: Ich esse jetzt {v}."],
         "Wie ernährt sich {s}?", ["vegan", "ketogen", "nach Paleo", "vegetarisch", "mediterran"],
         ["Die neue Bäckerei hat unglaubliches Brot.", "Diese Woche habe ich dreimal Nudeln gekocht."], "Wie ernähre ich mich?"),
        (["Ich habe eine neue Stelle als {v} in einem Startup.", "Gestern habe ich das Angebot unterschrieben, ich arbeite bald als {v}."],
         "Welche Stelle hat {s} angenommen?", ["Datenanalystin", "Krankenpflegerin", "Architektin", "Lehrerin", "Köchin"],
         ["Montags ist bei der Arbeit immer Chaos.", "Mein Chef hat endlich den Urlaub genehmigt."], "Welche Stelle habe ich angenommen?"),
        (["Über die Feiertage waren wir in {v} wandern, die Aussicht war unwirklich.", "Bin gerade von einer Woche Trekking in {v} zurück."],
         "Wo war {s} wandern?", ["Patagonien", "Nepal", "Island", "den Alpen", "Schottland"],
         ["Meine Stiefel sind nach dem Weg auseinandergefallen.", "In den Bergen fühle ich mich winzig."], "Wo war ich wandern?"),
    ],
}

THEMES = {
    "es": [
        (["Estoy planeando un viaje a {v} en primavera y no me decido dónde alojarme.", "Para el viaje a {v}, ¿compro un pase de tren o los billetes sobre la marcha?",
          "¿Qué barrios de {v} evitarías en una primera visita?"],
         "¿Qué hablamos sobre mi viaje a {v}?", ["Kioto", "Lisboa", "Estambul", "Buenos Aires", "Praga"]),
        (["Estamos reformando {v} y el contratista pidió mucho más de lo esperado.", "¿Aguantan mejor los azulejos o el vinilo para {v}?",
          "Las obras para reformar {v} se alargan, ¿cómo hago que el contratista cumpla los plazos?"],
         "¿Qué me aconsejaste sobre reformar {v}?", ["la cocina", "el baño", "el desván", "el sótano", "el balcón"]),
        (["La semana que viene tengo una entrevista para un puesto de {v} y me pone nerviosa la parte técnica.", "¿Cómo respondo a las preguntas de salario para un puesto de {v}?",
          "¿Me ayudas a preparar historias para la entrevista de {v}?"],
         "¿Cómo me ayudaste a preparar la entrevista de {v}?", ["jefe de producto", "desarrollador backend", "diseñador UX", "jefe de ventas", "científico de datos"]),
        (["Quiero cultivar {v} en el balcón pero no sé nada de tierra.", "Las plántulas de {v} están amarillas, ¿las riego demasiado?",
          "¿Cuándo es el momento de cosechar {v}?"],
         "¿Qué me contaste sobre cultivar {v}?", ["tomates", "fresas", "albahaca", "pimientos", "pepinos"]),
    ],
    "de": [
        (["Ich plane im Frühling eine Reise nach {v} und kann mich nicht entscheiden, wo ich wohnen soll.", "Soll ich für die Reise nach {v} einen Bahnpass kaufen oder Einzeltickets?",
          "Welche Viertel in {v} würdest du beim ersten Besuch meiden?"],
         "Was haben wir über meine Reise nach {v} besprochen?", ["Kyoto", "Lissabon", "Istanbul", "Buenos Aires", "Prag"]),
        (["Wir renovieren gerade, Raum: {v}, und der Handwerker hat viel mehr verlangt als erwartet.", "Halten Fliesen oder Vinyl besser? Es geht um den Raum {v}.",
          "Die Renovierung (Raum: {v}) zieht sich, wie halte ich den Handwerker im Zeitplan?"],
         "Was hast du mir zur Renovierung geraten, Raum: {v}?", ["Küche", "Bad", "Dachboden", "Keller", "Balkon"]),
        (["Nächste Woche habe ich ein Vorstellungsgespräch als {v} und bin wegen des technischen Teils nervös.", "Wie beantworte ich Gehaltsfragen für eine Stelle als {v}?",
          "Hilfst du mir, Beispiele für das Gespräch als {v} vorzubereiten?"],
         "Wie hast du mir bei der Vorbereitung auf das Gespräch als {v} geholfen?", ["Produktmanager", "Backend-Entwickler", "UX-Designer", "Vertriebsleiter", "Data Scientist"]),
        (["Ich möchte {v} auf dem Balkon anbauen, habe aber keine Ahnung von Erde.", "Meine {v}-Setzlinge werden gelb, gieße ich zu viel?",
          "Wann ist die richtige Zeit, {v} zu ernten?"],
         "Was hast du mir über den Anbau von {v} erzählt?", ["Tomaten", "Erdbeeren", "Basilikum", "Paprika", "Gurken"]),
    ],
}

FILLER = {
    "es": ["La verdad, la semana se me ha pasado volando.", "El trabajo me retuvo hasta tarde casi todos los días.", "El tiempo no para de cambiar entre lluvia y sol.",
           "El sábado por fin limpié todo el piso.", "Últimamente el móvil se me queda sin batería antes de comer.", "Vimos un documental sobre ballenas.",
           "Solo me mantiene en pie el café.", "El tráfico de esta mañana era increíble.", "Estoy intentando dormirme antes.",
           "Vinieron mis padres y cocinamos juntos.", "Siempre se me olvida contestar los mensajes.", "Han abierto una cafetería nueva en nuestra calle."],
    "de": ["Ehrlich gesagt ist die Woche wie im Flug vergangen.", "Die Arbeit hat mich fast jeden Tag lange festgehalten.", "Das Wetter wechselt ständig zwischen Regen und Sonne.",
           "Am Samstag habe ich endlich die ganze Wohnung geputzt.", "Mein Handy ist in letzter Zeit schon vor dem Mittag leer.", "Wir haben eine Doku über Wale gesehen.",
           "Nur der Kaffee hält mich noch aufrecht.", "Der Verkehr heute Morgen war unglaublich.", "Ich versuche, früher schlafen zu gehen.",
           "Meine Eltern waren zu Besuch und wir haben zusammen gekocht.", "Ich vergesse ständig, auf Nachrichten zu antworten.", "In unserer Straße hat ein neues Café aufgemacht."],
}
REPLIES = {
    "es": ["Suena a mucho, ve paso a paso.", "Buena pregunta; depende de tu presupuesto y del tiempo que tengas.",
           "Esto es lo primero que miraría: el coste, los plazos y lo que más te importa.", "Mucha gente en tu situación empieza poco a poco y luego ajusta."],
    "de": ["Das klingt nach viel, geh es Schritt für Schritt an.", "Gute Frage; das hängt von deinem Budget und deiner Zeit ab.",
           "Das würde ich zuerst bedenken: Kosten, Zeitplan und was dir am wichtigsten ist.", "Viele in deiner Lage fangen klein an und passen später an."],
}
QUESTION_TEMPORAL = {"es": "{q} (en {m} de {y})", "de": "{q} (im {m} {y})", "fr": "{q} (en {m} {y})", "pt": "{q} (em {m} de {y})"}
SELF = {"es": "yo", "de": "ich", "fr": "je", "pt": "eu"}

# French and Portuguese
FACTS_FR_PT = {
    "fr": [
        (["On a enfin ramené un petit chiot {v} du refuge !", "Devine quoi : un chiot {v} dort maintenant sur mon canapé, on l'a adopté."],
         "Quelle race de chien {s} a-t-il adoptée ?", ["beagle", "corgi", "husky", "caniche", "teckel"],
         ["Le chien du voisin a encore aboyé toute la nuit.", "Les chiens du parc sont toujours si contents."], "Quelle race de chien ai-je adoptée ?"),
        (["Je prends des cours de {v} tous les mardis soir.", "J'ai commencé à apprendre le {v} avec une professeure, deux fois par semaine."],
         "Quel instrument {s} apprend-il ?", ["piano", "violon", "guitare", "violoncelle", "batterie"],
         ["Il y avait un musicien de rue près de la gare aujourd'hui.", "La salle de concert du centre est en travaux."], "Quel instrument est-ce que j'apprends ?"),
        (["À l'automne on déménage à {v}, le nouveau travail est là-bas.", "Le déménagement est décidé : {v} à partir d'octobre."],
         "Dans quelle ville {s} déménage-t-il ?", ["Lisbonne", "Toronto", "Melbourne", "Vienne", "Osaka"],
         ["Les cartons sont le pire dans un déménagement.", "Mon cousin a changé de ville deux fois l'an dernier."], "Dans quelle ville est-ce que je déménage ?"),
        (["Ma sœur vient d'avoir une petite fille, elle s'appelle {v}.", "La petite {v} est née dimanche, je suis tata maintenant !"],
         "Comment s'appelle la nièce de {s} ?", ["Mila", "Sophie", "Ava", "Nora", "Lily"],
         ["Les bébés changent complètement le sommeil.", "Ma sœur a toujours voulu une grande famille."], "Comment s'appelle ma nièce ?"),
        (["Le week-end dernier j'ai couru mon premier {v}, j'ai encore mal aux jambes.", "J'ai passé la ligne d'arrivée du {v} sous mon temps cible !"],
         "Quelle course {s} a-t-il terminée ?", ["semi-marathon", "marathon", "10 km", "triathlon", "ultra-trail"],
         ["Courir par cette chaleur est impossible.", "J'ai acheté des baskets neuves mais elles grincent."], "Quelle course ai-je terminée ?"),
        (["Pour essayer, je suis un régime {v} depuis un mois.", "Ni viande ni produits laitiers : je mange {v} maintenant."],
         "Quel régime alimentaire {s} suit-il ?", ["végan", "cétogène", "paléo", "végétarien", "méditerranéen"],
         ["La nouvelle boulangerie a un pain incroyable.", "Cette semaine j'ai cuisiné des pâtes trois fois."], "Quel régime alimentaire est-ce que je suis ?"),
        (["J'ai trouvé un nouveau travail de {v} dans une startup.", "Hier j'ai signé l'offre, je vais travailler comme {v}."],
         "Quel poste {s} a-t-il accepté ?", ["analyste de données", "infirmière", "architecte", "professeure", "cheffe"],
         ["Le lundi au travail c'est toujours le chaos.", "Mon chef a enfin validé les vacances."], "Quel poste ai-je accepté ?"),
        (["On a passé les fêtes à randonner en {v}, les paysages étaient irréels.", "Je rentre d'une semaine de trek en {v}."],
         "Où {s} a-t-il fait de la randonnée ?", ["Patagonie", "Islande", "Écosse", "Norvège", "Corse"],
         ["Mes chaussures sont tombées en morceaux après ce sentier.", "À la montagne je me sens minuscule."], "Où ai-je fait de la randonnée ?"),
    ],
    "pt": [
        (["Finalmente trouxemos do abrigo um cachorrinho {v}!", "Adivinha: agora dorme no meu sofá um cachorrinho {v}, nós o adotamos."],
         "Que raça de cachorro {s} adotou?", ["beagle", "corgi", "husky", "poodle", "dachshund"],
         ["O cachorro do vizinho latiu a noite toda de novo.", "Os cachorros do parque estão sempre tão felizes."], "Que raça de cachorro eu adotei?"),
        (["Tenho aulas de {v} todas as terças à noite.", "Comecei a aprender {v} com uma professora, duas vezes por semana."],
         "Que instrumento {s} está estudando?", ["piano", "violino", "violão", "violoncelo", "bateria"],
         ["Hoje havia um músico de rua perto da estação.", "A sala de concertos do centro está em reforma."], "Que instrumento eu estou estudando?"),
        (["No outono nos mudamos para {v}, o emprego novo é lá.", "A mudança está decidida: {v} a partir de outubro."],
         "Para qual cidade {s} vai se mudar?", ["Lisboa", "Toronto", "Melbourne", "Viena", "Osaka"],
         ["As caixas são a pior parte de qualquer mudança.", "Meu primo mudou de cidade duas vezes no ano passado."], "Para qual cidade eu vou me mudar?"),
        (["Minha irmã acabou de ter uma menina, ela se chama {v}.", "A pequena {v} nasceu no domingo, agora sou tia!"],
         "Como se chama a sobrinha de {s}?", ["Mila", "Sofia", "Ava", "Nora", "Lily"],
         ["Bebês mudam o sono completamente.", "Minha irmã sempre quis uma família grande."], "Como se chama a minha sobrinha?"),
        (["No fim de semana corri minha primeira {v}, as pernas ainda doem.", "Cruzei a linha de chegada da {v} abaixo do meu tempo!"],
         "Que prova {s} completou?", ["meia maratona", "maratona", "corrida de 10 km", "corrida de montanha", "ultramaratona"],
         ["Correr com este calor é impossível.", "Comprei tênis novos mas eles rangem."], "Que prova eu completei?"),
        (["Como experiência, estou há um mês numa dieta {v}.", "Sem carne nem laticínios: agora sigo uma dieta {v}."],
         "Que alimentação {s} segue?", ["vegana", "cetogênica", "paleo", "vegetariana", "mediterrânea"],
         ["A padaria nova tem um pão incrível.", "Esta semana cozinhei massa três vezes."], "Que alimentação eu sigo?"),
        (["Consegui um emprego novo como {v} numa startup.", "Ontem assinei a proposta, vou trabalhar como {v}."],
         "Que cargo {s} aceitou?", ["analista de dados", "enfermeira", "arquiteta", "professora", "cozinheira"],
         ["Às segundas no trabalho é sempre um caos.", "Meu chefe finalmente aprovou as férias."], "Que cargo eu aceitei?"),
        (["Passamos as festas fazendo trilhas na {v}, as paisagens eram irreais.", "Acabei de voltar de uma semana de caminhadas na {v}."],
         "Onde {s} fez trilha?", ["Patagônia", "Islândia", "Escócia", "Noruega", "Serra da Estrela"],
         ["Minhas botas se desfizeram depois daquela trilha.", "Na montanha eu me sinto minúscula."], "Onde eu fiz trilha?"),
    ],
}
THEMES_FR_PT = {
    "fr": [
        (["Je prépare un voyage à {v} au printemps et je n'arrive pas à choisir où loger.", "Pour le voyage à {v}, je prends un pass de train ou des billets au fur et à mesure ?",
          "Quels quartiers de {v} éviterais-tu pour une première visite ?"],
         "Qu'est-ce qu'on a dit sur mon voyage à {v} ?", ["Kyoto", "Lisbonne", "Istanbul", "Buenos Aires", "Prague"]),
        (["On rénove la pièce {v} et l'artisan a demandé bien plus que prévu.", "Le carrelage ou le vinyle tient mieux pour la pièce {v} ?",
          "Les travaux de la pièce {v} traînent, comment faire respecter les délais à l'artisan ?"],
         "Quels conseils m'as-tu donnés pour rénover la pièce {v} ?", ["cuisine", "salle de bain", "grenier", "cave", "balcon"]),
        (["J'ai un entretien pour un poste de {v} la semaine prochaine et la partie technique me stresse.", "Comment répondre aux questions de salaire pour un poste de {v} ?",
          "Tu m'aides à préparer des exemples pour l'entretien de {v} ?"],
         "Comment m'as-tu aidé à préparer l'entretien de {v} ?", ["chef de produit", "développeur backend", "designer UX", "responsable commercial", "data scientist"]),
        (["Je voudrais faire pousser des {v} sur mon balcon mais je n'y connais rien en terreau.", "Mes semis de {v} jaunissent, est-ce que j'arrose trop ?",
          "Quand faut-il récolter les {v} ?"],
         "Qu'est-ce que tu m'as dit sur la culture des {v} ?", ["tomates", "fraises", "basilics", "poivrons", "concombres"]),
    ],
    "pt": [
        (["Estou planejando uma viagem para {v} na primavera e não consigo decidir onde ficar.", "Para a viagem a {v}, compro um passe de trem ou os bilhetes na hora?",
          "Que bairros de {v} você evitaria numa primeira visita?"],
         "O que conversamos sobre a minha viagem a {v}?", ["Kyoto", "Lisboa", "Istambul", "Buenos Aires", "Praga"]),
        (["Estamos reformando o cômodo {v} e o empreiteiro cobrou muito mais do que o esperado.", "Azulejo ou vinil aguenta melhor no cômodo {v}?",
          "A reforma do cômodo {v} está demorando, como faço o empreiteiro cumprir os prazos?"],
         "Que conselho você me deu sobre reformar o cômodo {v}?", ["cozinha", "banheiro", "sótão", "porão", "varanda"]),
        (["Semana que vem tenho uma entrevista para uma vaga de {v} e estou nervosa com a parte técnica.", "Como respondo às perguntas de salário para uma vaga de {v}?",
          "Você me ajuda a preparar exemplos para a entrevista de {v}?"],
         "Como você me ajudou a preparar a entrevista de {v}?", ["gerente de produto", "desenvolvedor backend", "designer UX", "líder de vendas", "cientista de dados"]),
        (["Quero plantar {v} na varanda mas não entendo nada de terra.", "As mudas de {v} estão amarelando, estou regando demais?",
          "Qual é a hora certa de colher {v}?"],
         "O que você me contou sobre plantar {v}?", ["tomates", "morangos", "manjericão", "pimentões", "pepinos"]),
    ],
}
FILLER_FR_PT = {
    "fr": ["Franchement, la semaine est passée à toute vitesse.", "Le travail m'a retenue tard presque tous les jours.", "La météo alterne sans arrêt entre pluie et soleil.",
           "Samedi j'ai enfin nettoyé tout l'appartement.", "En ce moment mon téléphone est vide avant midi.", "On a regardé un documentaire sur les baleines.",
           "Seul le café me fait tenir.", "La circulation ce matin était incroyable.", "J'essaie de me coucher plus tôt.",
           "Mes parents sont venus et on a cuisiné ensemble.", "J'oublie tout le temps de répondre aux messages.", "Un nouveau café a ouvert dans notre rue."],
    "pt": ["Sinceramente, a semana passou voando.", "O trabalho me segurou até tarde quase todos os dias.", "O tempo não para de mudar entre chuva e sol.",
           "No sábado finalmente limpei o apartamento inteiro.", "Ultimamente o celular descarrega antes do almoço.", "Assistimos a um documentário sobre baleias.",
           "Só o café me mantém de pé.", "O trânsito hoje de manhã estava inacreditável.", "Estou tentando dormir mais cedo.",
           "Meus pais vieram e cozinhamos juntos.", "Vivo esquecendo de responder as mensagens.", "Abriu uma cafeteria nova na nossa rua."],
}
REPLIES_FR_PT = {
    "fr": ["Ça fait beaucoup, vas-y étape par étape.", "Bonne question ; ça dépend de ton budget et du temps que tu as.",
           "Voici ce que je regarderais d'abord : le coût, les délais et ce qui compte le plus pour toi.", "Beaucoup de gens dans ta situation commencent petit et ajustent ensuite."],
    "pt": ["Parece muita coisa, vá passo a passo.", "Boa pergunta; depende do seu orçamento e do tempo que você tem.",
           "Eis o que eu consideraria primeiro: o custo, os prazos e o que mais importa para você.", "Muita gente na sua situação começa pequeno e ajusta depois."],
}

FACTS.update(FACTS_FR_PT)
THEMES.update(THEMES_FR_PT)
FILLER.update(FILLER_FR_PT)
REPLIES.update(REPLIES_FR_PT)

# Italian
NAMES["it"] = ["Giulia", "Marco", "Chiara", "Luca", "Francesca", "Matteo", "Sara", "Davide"]
MONTHS["it"] = ["gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"]
QUESTION_TEMPORAL["it"] = "{q} (a {m} {y})"
SELF["it"] = "io"
FACTS["it"] = [
    (["Finalmente abbiamo portato a casa dal canile un cucciolo di {v}!", "Indovina: adesso sul mio divano dorme un cucciolo di {v}, l'abbiamo adottato."],
     "Che razza di cane ha adottato {s}?", ["beagle", "corgi", "husky", "barboncino", "bassotto"],
     ["Il cane del vicino ha abbaiato di nuovo tutta la notte.", "I cani al parco sono sempre così felici."], "Che razza di cane ho adottato?"),
    (["Faccio lezione di {v} ogni martedì sera.", "Ho cominciato a studiare {v} con un'insegnante, due volte a settimana."],
     "Che strumento studia {s}?", ["pianoforte", "violino", "chitarra", "violoncello", "batteria"],
     ["Oggi c'era un musicista di strada vicino alla stazione.", "Stanno ristrutturando la sala concerti in centro."], "Che strumento studio?"),
    (["In autunno ci trasferiamo a {v}, il nuovo lavoro è lì.", "Il trasloco è deciso: {v} da ottobre."],
     "In che città si trasferisce {s}?", ["Lisbona", "Toronto", "Melbourne", "Vienna", "Osaka"],
     ["Gli scatoloni sono la parte peggiore di ogni trasloco.", "Mio cugino l'anno scorso ha cambiato città due volte."], "In che città mi trasferisco?"),
    (["Mia sorella ha appena avuto una bambina, l'hanno chiamata {v}.", "La piccola {v} è nata domenica, adesso sono zia!"],
     "Come si chiama la nipote di {s}?", ["Mila", "Sofia", "Ava", "Nora", "Lily"],
     ["I bambini ti cambiano completamente il sonno.", "Mia sorella ha sempre voluto una famiglia numerosa."], "Come si chiama mia nipote?"),
    (["Lo scorso weekend ho corso la mia prima {v}, mi fanno ancora male le gambe.", "Ho tagliato il traguardo della {v} sotto il mio tempo obiettivo!"],
     "Che gara ha completato {s}?", ["mezza maratona", "maratona", "10 km", "gara di trail", "ultramaratona"],
     ["Correre con questo caldo è impossibile.", "Ho comprato scarpe nuove ma cigolano."], "Che gara ho completato?"),
    (["Per esperimento seguo da un mese una dieta {v}.", "Niente carne né latticini: adesso seguo una dieta {v}."],
     "Che alimentazione segue {s}?", ["vegana", "chetogenica", "paleo", "vegetariana", "mediterranea"],
     ["Il nuovo forno ha un pane incredibile.", "Questa settimana ho cucinato la pasta tre volte."], "Che alimentazione seguo?"),
    (["Ho trovato un nuovo lavoro come {v} in una startup.", "Ieri ho firmato l'offerta, lavorerò come {v}."],
     "Che posto ha accettato {s}?", ["analista di dati", "infermiera", "architetta", "insegnante", "cuoca"],
     ["Il lunedì al lavoro è sempre il caos.", "Il mio capo ha finalmente approvato le ferie."], "Che posto ho accettato?"),
    (["Abbiamo passato le feste a fare trekking in {v}, i panorami erano irreali.", "Sono appena tornata da una settimana di escursioni in {v}."],
     "Dove ha fatto trekking {s}?", ["Patagonia", "Islanda", "Scozia", "Norvegia", "Sardegna"],
     ["Le mie scarpe da montagna si sono distrutte dopo quel sentiero.", "In montagna mi sento minuscola."], "Dove ho fatto trekking?"),
]
THEMES["it"] = [
    (["Sto organizzando un viaggio a {v} in primavera e non riesco a decidere dove alloggiare.", "Per il viaggio a {v} conviene un pass ferroviario o i biglietti man mano?",
      "Quali quartieri di {v} eviteresti alla prima visita?"],
     "Cosa abbiamo detto del mio viaggio a {v}?", ["Kyoto", "Lisbona", "Istanbul", "Buenos Aires", "Praga"]),
    (["Stiamo ristrutturando la stanza {v} e l'impresa ha chiesto molto più del previsto.", "Reggono meglio le piastrelle o il vinile nella stanza {v}?",
      "I lavori nella stanza {v} vanno per le lunghe, come faccio a far rispettare i tempi all'impresa?"],
     "Che consigli mi hai dato per ristrutturare la stanza {v}?", ["cucina", "bagno", "soffitta", "cantina", "balcone"]),
    (["La prossima settimana ho un colloquio per un posto da {v} e la parte tecnica mi agita.", "Come rispondo alle domande sullo stipendio per un posto da {v}?",
      "Mi aiuti a preparare degli esempi per il colloquio da {v}?"],
     "Come mi hai aiutato a preparare il colloquio da {v}?", ["product manager", "sviluppatore backend", "designer UX", "responsabile vendite", "data scientist"]),
    (["Vorrei coltivare {v} sul balcone ma non so niente di terriccio.", "Le piantine di {v} stanno ingiallendo, le annaffio troppo?",
      "Quando è il momento giusto per raccogliere {v}?"],
     "Cosa mi hai detto sulla coltivazione di {v}?", ["pomodori", "fragole", "basilico", "peperoni", "cetrioli"]),
]
FILLER["it"] = ["Sinceramente la settimana è volata.", "Il lavoro mi ha trattenuta fino a tardi quasi ogni giorno.", "Il tempo continua a cambiare tra pioggia e sole.",
                "Sabato finalmente ho pulito tutto l'appartamento.", "Ultimamente il telefono si scarica prima di pranzo.", "Abbiamo visto un documentario sulle balene.",
                "Solo il caffè mi tiene in piedi.", "Il traffico stamattina era incredibile.", "Sto cercando di andare a dormire prima.",
                "Sono venuti i miei genitori e abbiamo cucinato insieme.", "Mi dimentico sempre di rispondere ai messaggi.", "Hanno aperto un bar nuovo nella nostra via."]
REPLIES["it"] = ["Sembra tanto, procedi un passo alla volta.", "Bella domanda; dipende dal tuo budget e dal tempo che hai.",
                 "Ecco cosa valuterei per primo: il costo, i tempi e cosa conta di più per te.", "Molte persone nella tua situazione iniziano in piccolo e poi aggiustano."]
